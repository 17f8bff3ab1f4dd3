/* olla-onnx command line: one function per sub-command, each in its own
 * cli/cmd_*.c file. argv[0] is the sub-command name. Return the exit code. */
#ifndef OLLA_CLI_H
#define OLLA_CLI_H

int olla_cmd_convert(int argc, char **argv);
int olla_cmd_check(int argc, char **argv);
int olla_cmd_shapes(int argc, char **argv);
int olla_cmd_place(int argc, char **argv);

/* Shared helpers (cli/util.c). */
int olla_cli_parse_i64(const char *s, long long *out);
int olla_cli_parse_double(const char *s, double *out);
struct olla_dim_binding;
/* NAME=VALUE into a binding whose name is malloc'd. */
int olla_cli_parse_dim(const char *arg, struct olla_dim_binding *out);

#endif
