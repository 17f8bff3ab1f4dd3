/* olla-onnx check out.onnx: verify a written plan. */
#include <stdio.h>

#include "cli/cli.h"

int olla_cmd_check(int argc, char **argv)
{
    fprintf(stderr, "usage: olla-onnx check model.onnx\n");
    return 2;
}
