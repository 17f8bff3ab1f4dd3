#ifndef OLLA_TIME_H
#define OLLA_TIME_H

#include <time.h>

static inline double olla_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
