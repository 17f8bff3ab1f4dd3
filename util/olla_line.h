/* olla-onnx: one line of text built from whole pieces. A piece that does not
 * fit is left out entirely, never cut, so a message built this way never
 * ends inside a name or a clause: the caller says what was left out instead
 * ("and 3 more"), with room it kept for that (the reserve).
 *
 *   char msg[256];
 *   olla_line l;
 *   olla_line_init(&l, msg, sizeof msg);
 *   olla_line_add(&l, 0, "%s: ", path);
 *   for (...) if (!olla_line_add(&l, 20, "'%s', ", name)) { olla_line_add(&l, 0, "and %d more", left); break; } */
#ifndef OLLA_LINE_H
#define OLLA_LINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct olla_line {
    char *buf;
    size_t size; /* of buf, the terminator included */
    size_t len;  /* characters written */
} olla_line;

void olla_line_init(olla_line *l, char *buf, size_t size);
/* Appends the formatted piece when all of it fits and leaves at least
 * `reserve` bytes free after it: returns 1. Otherwise returns 0 and the
 * line is unchanged. */
int olla_line_add(olla_line *l, size_t reserve, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A byte count as the summary, batch's table and the picture's title write
 * it: "9830 B", "12.5 KiB", "37.5 MiB", "12.0 GiB" (one decimal from ten of
 * a unit on). */
void olla_human_bytes(int64_t bytes, char *buf, size_t size);

/* How after compares with before, as the summary writes it: "2.4% less",
 * "0.5% more", the bytes ("25.0 KiB more") where the percentage would
 * print as 0.0, or "the same". */
void olla_human_change(int64_t before, int64_t after, char *buf, size_t size);

/* The saving from before to after as a table cell: "55.3%", "0.0%" when
 * equal, "<0.1%" for less that would print as 0.0, "none" for more that
 * would print as -0.0, "-1.2%" for more beyond that. */
void olla_human_saving(int64_t before, int64_t after, char *buf, size_t size);

/* The saving from before to after as the summary's headline and batch's
 * total write it: "55.3%", "0.0%" when equal, the bytes for less that
 * would print as 0.0 ("12.0 KiB (under 0.1%)"), "none (25.0 KiB more)" for
 * any more. */
void olla_human_headline(int64_t before, int64_t after, char *buf, size_t size);

#endif
