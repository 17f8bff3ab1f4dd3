/* olla-onnx: the command-line front end. Everything real is in the library;
 * this file only picks the sub-command. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "olla.h"

#include "cli/cli.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
} olla_command;

static const olla_command commands[] = {
    {"check", olla_cmd_check},
    {"batch", olla_cmd_batch},
    {"shapes", olla_cmd_shapes},
    {"place", olla_cmd_place},
    {"tradeoff", olla_cmd_tradeoff},
};

/* Ctrl-C: leave no partial output and stop at once. */
static void on_interrupt(int sig)
{
    olla_stop_requested = 1;
    olla_write_abandon();
    static const char msg[] = "olla-onnx: interrupted; no output written\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(128 + sig);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a file-size limit should fail the write, not kill the process */
    signal(SIGXFSZ, SIG_IGN);
    if (argc >= 2) {
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[1], commands[i].name) == 0)
                return commands[i].run(argc - 1, argv + 1);
    }
    return olla_cmd_convert(argc, argv);
}
