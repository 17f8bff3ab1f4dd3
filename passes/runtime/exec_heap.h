/* olla-onnx: the binary min-heap of int64 keys that the runtime order
 * models share (private to passes/runtime). h holds at least as many
 * entries as are ever pushed. */
#ifndef OLLA_EXEC_HEAP_H
#define OLLA_EXEC_HEAP_H

#include <stdint.h>

static inline void exec_heap_push(int64_t *h, int *n, int64_t key)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > key) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = key;
}

/* Removes and returns the smallest key; *n must be > 0. */
static inline int64_t exec_heap_pop(int64_t *h, int *n)
{
    int64_t top = h[0], last = h[--(*n)];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= last)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

#endif
