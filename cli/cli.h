/* olla-onnx command line: one function per sub-command, each in its own
 * cli/cmd_*.c file. argv[0] is the sub-command name. Return the exit code. */
#ifndef OLLA_CLI_H
#define OLLA_CLI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "olla.h"

int olla_cmd_convert(int argc, char **argv);
int olla_cmd_check(int argc, char **argv);
int olla_cmd_shapes(int argc, char **argv);
int olla_cmd_place(int argc, char **argv);
int olla_cmd_batch(int argc, char **argv);
int olla_cmd_tradeoff(int argc, char **argv);

/* Shared helpers (cli/util.c, cli/options.c). */
int olla_cli_parse_i64(const char *s, long long *out);
int olla_cli_parse_double(const char *s, double *out);
/* NAME=VALUE into a binding whose name is malloc'd. */
int olla_cli_parse_dim(const char *arg, olla_dim_binding *out);
/* Appends the binding NAME=VALUE to *dims (*n of them); 0 after printing
 * why not (malformed, or NAME already bound). */
int olla_cli_add_dim(const char *who, const char *arg, olla_dim_binding **dims, int *n);
/* An alignment: a power of two from 1 to 2^30. */
int olla_cli_parse_alignment(const char *s, long long *out);
/* NAME=D1,D2,... (a dim -1 or empty is unknown; "NAME=" a scalar) into a
 * shape whose name and dims are malloc'd. 0 with a one-line message in msg
 * when the text is not one. */
int olla_cli_parse_input_shape(const char *arg, olla_input_shape *out, char *msg, size_t size);

/* The library's diagnostics (olla_options.log), a line each on stderr. */
void olla_cli_log(void *ctx, olla_log_level level, const char *message);

/* Planning options shared by the converting sub-commands. */
typedef struct olla_cli_plan_opts {
    olla_options opt;
    olla_dim_binding *dims;
    int n_dims;
    int time_limit_given; /* --time-limit was on the command line */
    int memory_limit_given; /* --memory-limit was */
    olla_input_shape *shapes; /* --input-shape */
    int n_shapes;
} olla_cli_plan_opts;

void olla_cli_plan_opts_init(olla_cli_plan_opts *po);
/* Applies $OLLA_TIME_LIMIT unless --time-limit was given, and checks the
 * options against each other; 0 after printing an error (exit 2): an
 * OLLA_TIME_LIMIT that is not a positive number, --memory-limit with
 * --keep-order. Call after parsing the command line. */
int olla_cli_plan_opts_env(olla_cli_plan_opts *po, const char *who);
void olla_cli_plan_opts_free(olla_cli_plan_opts *po);
/* Consumes argv[*i] (and its value) when it is a planning option: returns 1,
 * 0 when it is not one, -1 after printing a usage error. */
int olla_cli_plan_option(olla_cli_plan_opts *po, int argc, char **argv, int *i);

/* The live progress line (cli/progress.c). */
typedef struct olla_cli_progress {
    const char *model;         /* its file name, without folders */
    int live, shown, ticking, stop;
    pthread_t thread;          /* the ticker redrawing a live line */
    pthread_mutex_t lock;
    char phase[32];
    double elapsed, seen_at;   /* as of the last report, and when it came */
    int64_t best, bound;       /* -1 unknown */
} olla_cli_progress;
void olla_cli_progress_start(olla_cli_progress *p, olla_options *opt, const char *model);
void olla_cli_progress_end(olla_cli_progress *p);

/* Output files, checked before any work (cli/outputs.c). */
typedef struct olla_cli_output {
    const char *what; /* how the user gave it: "--report", "the output model" */
    const char *path; /* NULL: not asked for */
} olla_cli_output;
/* 0 after printing a one-line error naming the argument (exit 2): a folder
 * that does not exist or takes no new files, a path that is a folder or the
 * input itself, or two outputs that are one file. */
int olla_cli_check_outputs(const char *who, const char *input, const olla_cli_output *outs, int n);
/* "1 node", "3 nodes" */
const char *olla_cli_plural(long long n, const char *one, const char *many);

double olla_cli_pct(int64_t part, int64_t whole);
void olla_cli_human_bytes(int64_t b, char *buf, size_t n);

#endif
