#!/usr/bin/python3
"""Prints, one a line and sorted, the command-line flags a text names.

  doc_flags.py help FILE      a --help text (everything)
  doc_flags.py options FILE   a --help text, from its "options:" line on
  doc_flags.py readme FILE    README.md: the "## Usage" section up to
                              "## What is planned", without ```sh examples
  doc_flags.py man FILE       a man page (roff escapes removed)
  doc_flags.py source DIR     the flag literals ("--x", "-x") of DIR/*.c

A flag is -x or --word-word that starts a word: after a space, a bracket, a
parenthesis, a comma, a bar or a backquote (so "olla-onnx" names none).
"""
import glob
import re
import sys

FLAG = re.compile(r"(?:^|(?<=[\s\[(,|`]))(--?[A-Za-z][A-Za-z0-9-]*)")


def flags(text):
    return {m.group(1).rstrip("-") for m in FLAG.finditer(text)}


def readme(text):
    start = text.index("## Usage")
    end = text.index("## What is planned")
    section = text[start:end]
    return re.sub(r"```sh\n.*?```", "", section, flags=re.S)


def man(text):
    text = re.sub(r"\\f[BIRP]", "", text)
    return text.replace("\\-", "-")


def source(folder):
    found = set()
    for path in glob.glob(folder + "/*.c"):
        found |= set(re.findall(r'"(--?[A-Za-z][A-Za-z0-9-]*)"', open(path, encoding="utf-8").read()))
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "source":
        found = source(path)
    else:
        text = open(path, encoding="utf-8").read()
        if kind == "options":
            text = text[text.index("options:"):]
        elif kind == "readme":
            text = readme(text)
        elif kind == "man":
            text = man(text)
        found = flags(text)
    for f in sorted(found):
        print(f)


if __name__ == "__main__":
    main()
