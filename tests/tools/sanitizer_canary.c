/* A deliberate undefined behaviour inside a forked solver child, for the
 * sanitizer build only: the solve stores an int64_t at a misaligned
 * address, as a result buffer that packs an int before it would. The child
 * dies of the report and the parent carries on as if the solver had found
 * nothing, so only a harness that watches every process catches it
 * (tests/tools/test_sanitizer_canary.sh). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "solver/olla_cbc_child.h"

static olla_status misaligned_solve(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    (void)ctx;
    (void)cbc_limit;
    (void)err;
    char *bytes = out;
    volatile int64_t *wrong = (volatile int64_t *)(void *)(bytes + sizeof(int));
    *wrong = 42;
    return OLLA_OK;
}

int main(void)
{
    char out[64];
    memset(out, 0, sizeof out);
    olla_error err = {0};
    olla_cbc_outcome oc = {0};
    olla_status st = olla_cbc_child_run(&(olla_cbc_job){misaligned_solve, NULL, out, sizeof out}, 10.0, &oc, &err);
    printf("parent: status %d, finished %d, crash signal %d\n", (int)st, oc.finished, oc.crash_signal);
    return st == OLLA_OK ? 0 : 1;
}
