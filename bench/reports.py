"""Reads the reports bench/convert_corpus.sh leaves: one dict per model,
sorted by name (folder/model), with the key "name" added."""
import glob
import json
import os


def load_reports(out):
    rows = []
    for f in sorted(glob.glob(os.path.join(out, "*", "*.json"))):
        r = json.load(open(f))
        r["name"] = os.path.relpath(f, out)[:-5]
        rows.append(r)
    return rows


def mib(b):
    return f"{b / 2**20:.2f}"
