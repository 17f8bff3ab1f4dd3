/* olla-onnx: the command-line front end. Everything real is in the library;
 * this file only picks the sub-command. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
} olla_command;

static const olla_command commands[] = {
    {"check", olla_cmd_check},
    {"place", olla_cmd_place},
};

int main(int argc, char **argv)
{
    if (argc >= 2) {
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[1], commands[i].name) == 0)
                return commands[i].run(argc - 1, argv + 1);
    }
    return olla_cmd_convert(argc, argv);
}
