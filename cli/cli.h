/* olla-onnx command line: one function per sub-command, each in its own
 * cli/cmd_*.c file. argv[0] is the sub-command name. Return the exit code. */
#ifndef OLLA_CLI_H
#define OLLA_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "olla.h"

int olla_cmd_convert(int argc, char **argv);
int olla_cmd_check(int argc, char **argv);
int olla_cmd_shapes(int argc, char **argv);
int olla_cmd_place(int argc, char **argv);
int olla_cmd_batch(int argc, char **argv);

/* Shared helpers (cli/util.c, cli/options.c). */
int olla_cli_parse_i64(const char *s, long long *out);
int olla_cli_parse_double(const char *s, double *out);
/* NAME=VALUE into a binding whose name is malloc'd. */
int olla_cli_parse_dim(const char *arg, olla_dim_binding *out);
/* NAME=D1,D2,... (a dim -1 or empty is unknown; "NAME=" a scalar) into a
 * shape whose name and dims are malloc'd. 0 with a one-line message in msg
 * when the text is not one. */
int olla_cli_parse_input_shape(const char *arg, olla_input_shape *out, char *msg, size_t size);

/* Planning options shared by the converting sub-commands. */
typedef struct olla_cli_plan_opts {
    olla_options opt;
    olla_dim_binding *dims;
    int n_dims;
    olla_input_shape *shapes; /* --input-shape */
    int n_shapes;
} olla_cli_plan_opts;

void olla_cli_plan_opts_init(olla_cli_plan_opts *po);
void olla_cli_plan_opts_free(olla_cli_plan_opts *po);
/* Consumes argv[*i] (and its value) when it is a planning option: returns 1,
 * 0 when it is not one, -1 after printing a usage error. */
int olla_cli_plan_option(olla_cli_plan_opts *po, int argc, char **argv, int *i);

/* The live progress line (cli/progress.c). */
typedef struct olla_cli_progress {
    const char *model;
    int tty, shown;
    char last_phase[32];
} olla_cli_progress;
void olla_cli_progress_start(olla_cli_progress *p, olla_options *opt, const char *model);
void olla_cli_progress_end(olla_cli_progress *p);

double olla_cli_pct(int64_t part, int64_t whole);
void olla_cli_human_bytes(int64_t b, char *buf, size_t n);

#endif
