/* olla-onnx in.onnx out.onnx: plan a model and write it back. */
#include <stdio.h>

#include "cli/cli.h"

int olla_cmd_convert(int argc, char **argv)
{
    fprintf(stderr, "usage: olla-onnx [options] in.onnx out.onnx\n");
    return 2;
}
