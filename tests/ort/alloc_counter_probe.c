/*
 * alloc_counter_probe.c: checks the allocation counter (alloc_counter.c) from
 * inside a process it is preloaded into. tests/cli/test_ort_harness.sh runs
 *
 *   ALLOC_COUNTER_OUT=FILE LD_PRELOAD=libolla_alloc_counter.so alloc_counter_probe FILE
 *
 * and the probe makes allocations of known sizes through every wrapped
 * function between the counter's marks, reads what the counter wrote at each
 * stop mark and compares it with the bytes it knows it held. Prints one line
 * per check and exits 0 when all hold, 1 otherwise (the counter not loaded
 * included).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARK_START 1000003u /* ALLOC_COUNTER_MARK_START */
#define MARK_STOP 1000033u  /* ALLOC_COUNTER_MARK_STOP */
#define MARK_PAUSE 1000037u /* ALLOC_COUNTER_MARK_PAUSE */
#define MARK_RESUME 1000039u /* ALLOC_COUNTER_MARK_RESUME */

/* Called through a volatile pointer so that the compiler keeps every call. */
static void *(*volatile call_malloc)(size_t) = malloc;
static void (*volatile call_free)(void *) = free;

typedef struct window_result {
    long long all_peak, caller_peak, peak_live, live_at_start, live_at_stop, all_blocks, caller_blocks;
} window_result;

static const char *result_path;
static int failures;

static void mark(size_t bytes)
{
    void *p = call_malloc(bytes);
    call_free(p);
}

static long long field(const char *line, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *at = strstr(line, key);
    return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

static int read_result(window_result *r)
{
    char line[512] = {0};
    FILE *f = fopen(result_path, "r");
    if (!f)
        return 0;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    remove(result_path);
    if (n == 0 || strstr(line, "\"error\""))
        return 0;
    r->all_peak = field(line, "all_threads_peak_bytes");
    r->caller_peak = field(line, "caller_peak_bytes");
    r->caller_blocks = field(line, "caller_blocks");
    r->all_blocks = field(line, "all_threads_blocks");
    r->peak_live = field(line, "peak_live");
    r->live_at_start = field(line, "live_at_start");
    r->live_at_stop = field(line, "live_at_stop");
    return 1;
}

static void expect(const char *what, long long got, long long want)
{
    printf("%s %s: %lld (expected %lld)\n", got == want ? "ok:" : "FAILED:", what, got, want);
    failures += got != want;
}

/* Every wrapped function once, with frees and a realloc before the peak, and
 * a block from before the window freed inside it. */
static void check_wrappers(void)
{
    void *before = call_malloc(200000);
    mark(MARK_START);
    void *a = call_malloc(100000);
    void *b = calloc(1000, 50);                 /* 50,000 */
    void *c = NULL;
    if (posix_memalign(&c, 64, 300000))         /* window live: 450,000 */
        c = NULL;
    call_free(a);                               /* 350,000 */
    call_free(before);                          /* not in the window: no change */
    void *d = realloc(b, 250000);               /* 550,000 */
    void *e = aligned_alloc(4096, 8192);        /* 558,192: the peak */
    void *small = memalign(64, 4095);           /* below 4 KiB: not counted */
    call_free(c);
    void *v = valloc(4096);                     /* 262,288 */
    mark(MARK_STOP);
    window_result r;
    if (!read_result(&r)) {
        printf("FAILED: the counter wrote no result; is it preloaded (LD_PRELOAD)?\n");
        failures++;
        return;
    }
    expect("wrappers: caller_peak_bytes", r.caller_peak, 558192);
    expect("wrappers: caller_blocks", r.caller_blocks, 6);
    expect("wrappers: all_threads_peak_bytes (one thread)", r.all_peak, 558192);
    expect("wrappers: all_threads_blocks", r.all_blocks, 6);
    expect("wrappers: live_at_stop - live_at_start", r.live_at_stop - r.live_at_start, 262288 - 200000);
    expect("wrappers: peak_live - live_at_start", r.peak_live - r.live_at_start, 450000);
    call_free(d);
    call_free(e);
    call_free(small);
    call_free(v);
}

/* A second window starts from zero, and frees of blocks allocated in an
 * earlier window do not lower it. */
static void check_second_window(void)
{
    void *old = call_malloc(70000);
    mark(MARK_START);
    call_free(old);
    void *p = call_malloc(40000);
    mark(MARK_STOP);
    window_result r;
    if (!read_result(&r)) {
        printf("FAILED: no result for the second window\n");
        failures++;
    } else {
        expect("second window: caller_peak_bytes", r.caller_peak, 40000);
    }
    call_free(p);
}

enum { CHURN_SLOTS = 4000, CHURN_STEPS = 80000, CHURN_THREADS = 2 };

typedef struct churn_job {
    uint64_t seed;
    long long max_live; /* the most bytes this job held at once */
} churn_job;

/* Random allocations and frees of 4 KiB .. 12 KiB blocks, enough live at once
 * to make the counter's table grow; every block is freed at the end. */
static void *churn(void *arg)
{
    churn_job *job = arg;
    uint64_t s = job->seed * 0x9e3779b97f4a7c15ull + 1;
    static _Thread_local void *slot[CHURN_SLOTS];
    static _Thread_local size_t bytes[CHURN_SLOTS];
    long long live = 0;
    for (int i = 0; i < CHURN_STEPS; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        size_t k = (size_t)(s % CHURN_SLOTS);
        if (slot[k]) {
            call_free(slot[k]);
            slot[k] = NULL;
            live -= (long long)bytes[k];
            continue;
        }
        bytes[k] = 4096 + (size_t)((s >> 20) % 8192);
        slot[k] = (s >> 40) % 2 ? call_malloc(bytes[k]) : realloc(NULL, bytes[k]);
        live += (long long)bytes[k];
        if (live > job->max_live)
            job->max_live = live;
    }
    for (int k = 0; k < CHURN_SLOTS; k++)
        call_free(slot[k]);
    return NULL;
}

/* One thread: the counter's peak is exactly the most the churn held. */
static void check_churn(void)
{
    churn_job job = {1, 0};
    mark(MARK_START);
    churn(&job);
    mark(MARK_STOP);
    window_result r;
    if (!read_result(&r)) {
        printf("FAILED: no result for the churn window\n");
        failures++;
        return;
    }
    expect("churn: caller_peak_bytes", r.caller_peak, job.max_live);
    expect("churn: live_at_stop - live_at_start", r.live_at_stop - r.live_at_start, 0);
    expect("churn: all_threads_peak_bytes", r.all_peak, job.max_live);
}

/* Two threads: the peak lies between the larger and the sum of their peaks. */
static void check_threads(void)
{
    pthread_t threads[CHURN_THREADS];
    churn_job jobs[CHURN_THREADS];
    mark(MARK_START);
    for (int t = 0; t < CHURN_THREADS; t++) {
        jobs[t] = (churn_job){(uint64_t)t + 2, 0};
        pthread_create(&threads[t], NULL, churn, &jobs[t]);
    }
    for (int t = 0; t < CHURN_THREADS; t++)
        pthread_join(threads[t], NULL);
    mark(MARK_STOP);
    window_result r;
    if (!read_result(&r)) {
        printf("FAILED: no result for the threaded window\n");
        failures++;
        return;
    }
    long long low = 0, high = 0;
    for (int t = 0; t < CHURN_THREADS; t++) {
        low = jobs[t].max_live > low ? jobs[t].max_live : low;
        high += jobs[t].max_live;
    }
    int in_range = r.all_peak >= low && r.all_peak <= high;
    printf("%s threads: all_threads_peak_bytes %lld in [%lld, %lld]\n", in_range ? "ok:" : "FAILED:", r.all_peak, low,
           high);
    failures += !in_range;
    expect("threads: live_at_stop - live_at_start", r.live_at_stop - r.live_at_start, 0);
    /* The opening thread allocated nothing: the workers' blocks are not its. */
    expect("threads: caller_peak_bytes", r.caller_peak, 0);
    expect("threads: caller_blocks", r.caller_blocks, 0);
}

/* Blocks allocated between a pause and a resume are not the window's; a
 * block of the window freed while paused still leaves it. */
static void check_pause(void)
{
    mark(MARK_START);
    void *kept = call_malloc(30000);            /* 30,000 */
    void *gone = call_malloc(20000);            /* 50,000 */
    mark(MARK_PAUSE);
    void *outside = call_malloc(500000);        /* not the window's */
    call_free(gone);                            /* 30,000 */
    call_free(outside);
    mark(MARK_RESUME);
    void *after = call_malloc(25000);           /* 55,000: the peak */
    mark(MARK_STOP);
    window_result r;
    if (!read_result(&r)) {
        printf("FAILED: no result for the paused window\n");
        failures++;
    } else {
        expect("pause: caller_peak_bytes", r.caller_peak, 55000);
        expect("pause: caller_blocks", r.caller_blocks, 3);
    }
    call_free(kept);
    call_free(after);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ALLOC_COUNTER_OUT=FILE LD_PRELOAD=libolla_alloc_counter.so %s FILE\n", argv[0]);
        return 2;
    }
    result_path = argv[1];
    remove(result_path);
    check_wrappers();
    check_second_window();
    check_churn();
    check_threads();
    check_pause();
    return failures ? 1 : 0;
}
