/* olla-onnx: the fuzz targets. Each takes any bytes, must never crash, leak
 * or hang, and aborts when the library breaks one of its promises (a failure
 * without a one-line message, an internal error other than running out of
 * memory, a plan that does not hold). The libFuzzer entry points wrap them;
 * tests/unit/test_regress.c replays saved inputs through them. */
#ifndef OLLA_FUZZ_H
#define OLLA_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"

int olla_fuzz_load(const uint8_t *data, size_t size);
int olla_fuzz_shapes(const uint8_t *data, size_t size);
int olla_fuzz_place_csv(const uint8_t *data, size_t size);

#endif
