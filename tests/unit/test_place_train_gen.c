/* Placement of generated training steps (tests/unit/place_gen.h):
 * Inception-style and DenseNet-style networks at batch 1 and 32, with
 * and without ReLU written in place, reach zero fragmentation (arena = max
 * live, checked by the independent validator) within the default work
 * budget, with no deadline, so the result is judged by work units only;
 * and the compiler-like generator makes the trace it promises. Under the
 * sanitizers (OLLA_TEST_QUICK, set by tests/CMakeLists.txt) two networks
 * of each family are placed instead of four: the two left out include
 * the costliest (Inception seed 3 at batch 32, 2.4e9 units, most of the
 * test's time), which the normal build still checks. */
#include <math.h>

#include "olla_test.h"
#include "place_gen.h"
#include "solver/olla_place.h"

/* The budget `olla-onnx place` derives from its default 30 s time limit. */
#define DEFAULT_WORK ((long long)(30.0 / 2 * (double)OLLA_PLACE_WORK_PER_SECOND) + 1)

static void check_zero_fragmentation(int family, int batch, int inplace, uint64_t seed)
{
    olla_buffer *b = NULL;
    long n = place_gen_train(family, batch, inplace, seed, &b);
    OLLA_CHECK(n > 100);
    if (n <= 0)
        return;
    olla_place_options opt = {64, 0, 0, 0, DEFAULT_WORK};
    olla_place_result res;
    olla_error err = {0};
    OLLA_CHECK(olla_place(b, (size_t)n, &opt, &res, &err) == OLLA_OK);
    int64_t live = olla_place_max_live(b, (size_t)n, 64);
    if (res.arena_bytes != live)
        fprintf(stderr, "%s seed %llu batch %d inplace %d: arena %lld, max live %lld, %lld units\n",
                family == PLACE_GEN_INCEPTION ? "inception" : "densenet", (unsigned long long)seed,
                batch, inplace, (long long)res.arena_bytes, (long long)live, res.work);
    OLLA_CHECK_EQ_I64(res.arena_bytes, live);
    OLLA_CHECK(res.status == OLLA_PLACE_OPTIMAL);
    OLLA_CHECK(res.stopped_by == OLLA_PLACE_STOPPED_NONE);
    OLLA_CHECK(res.work <= DEFAULT_WORK);
    OLLA_CHECK(olla_place_validate(b, (size_t)n, res.arena_bytes, 64, &err) == OLLA_OK);
    free(b);
}

/* The seeds checked: 1-4, or 1-2 under the sanitizers. */
static uint64_t last_seed(void)
{
    return olla_test_quick() ? 2 : 4;
}

/* Four networks of each family, each at two batch sizes and both sharing
 * modes: the widths, depths and concatenation fan-in vary with the seed. */
OLLA_TEST(test_inception_steps_reach_max_live)
{
    for (uint64_t seed = 1; seed <= last_seed(); seed++)
        for (int batch = 1; batch <= 32; batch += 31)
            for (int inplace = 0; inplace < 2; inplace++)
                check_zero_fragmentation(PLACE_GEN_INCEPTION, batch, inplace, seed);
}

OLLA_TEST(test_densenet_steps_reach_max_live)
{
    for (uint64_t seed = 1; seed <= last_seed(); seed++)
        for (int batch = 1; batch <= 32; batch += 31)
            for (int inplace = 0; inplace < 2; inplace++)
                check_zero_fragmentation(PLACE_GEN_DENSENET, batch, inplace, seed);
}

/* DenseNet-style seed 7 at batch 1: the search forwards in time gives up
 * at max live, and before the searches backwards in time (place_reverse.c)
 * the whole default budget left the arena 0.044% above it; then the search
 * backwards placed every buffer at max live (about 1.2e10 units), and now
 * a window around the busiest times does first (place_window.c, about
 * 4.4e9), proven optimal within the default budget (judged by units, not
 * time). The normal build only: under the sanitizers it takes minutes. */
OLLA_TEST(test_densenet_step_reached_backwards)
{
    if (!olla_test_quick())
        check_zero_fragmentation(PLACE_GEN_DENSENET, 1, 0, 7);
}

/* The generated step is a training step: the forward activations a
 * convolution saves live into the backward pass, so the busiest time holds
 * many buffers at once and lifetimes nest; the SGD results live to the
 * end; and a larger batch scales the activations, not the parameters. */
OLLA_TEST(test_train_generator_shape)
{
    for (int family = 0; family < 2; family++) {
        olla_buffer *b1 = NULL, *b32 = NULL;
        long n1 = place_gen_train(family, 1, 0, 3, &b1), n32 = place_gen_train(family, 32, 0, 3, &b32);
        OLLA_CHECK(n1 > 100 && n1 == n32);
        if (n1 <= 0 || n1 != n32) {
            free(b1);
            free(b32);
            continue;
        }
        int64_t end = 0, to_end = 0, bytes1 = 0, bytes32 = 0;
        for (long i = 0; i < n1; i++)
            end = b1[i].upper > end ? b1[i].upper : end;
        long long live_at_peak = 0, long_lived = 0;
        for (long i = 0; i < n1; i++) {
            to_end += b1[i].upper == end;
            long_lived += b1[i].upper - b1[i].lower > end / 3;
            bytes1 += b1[i].size;
            bytes32 += b32[i].size;
            OLLA_CHECK(b1[i].lower == b32[i].lower && b1[i].upper == b32[i].upper);
            OLLA_CHECK(b32[i].size >= b1[i].size);
        }
        /* the busiest time by bytes: count the buffers live there */
        int64_t best = -1, at = 0;
        for (int64_t t = 0; t < end; t++) {
            int64_t load = 0;
            for (long i = 0; i < n1; i++)
                load += b1[i].lower <= t && t < b1[i].upper ? b1[i].size : 0;
            if (load > best) {
                best = load;
                at = t;
            }
        }
        for (long i = 0; i < n1; i++)
            live_at_peak += b1[i].lower <= at && at < b1[i].upper;
        OLLA_CHECK(to_end > 10);          /* updated parameters */
        OLLA_CHECK(long_lived > 20);      /* saved activations */
        OLLA_CHECK(live_at_peak > n1 / 10);
        OLLA_CHECK(bytes32 > 8 * bytes1); /* activations grow with the batch */
        free(b1);
        free(b32);
    }
}

/* The compiler-like trace: about the asked number of buffers, heavy-tailed
 * sizes (the largest far above the median), short buffers nested inside
 * long ones, the same layer pattern repeated (many identical lifetimes up
 * to a shift in time with equal sizes), and the same trace from the same
 * seed. */
OLLA_TEST(test_compiler_generator_shape)
{
    olla_buffer *b = NULL, *c = NULL;
    long n = place_gen_compiler(5000, 11, &b), m = place_gen_compiler(5000, 11, &c);
    OLLA_CHECK(n >= 5000 && n < 5600 && n == m);
    if (n <= 0 || n != m) {
        free(b);
        free(c);
        return;
    }
    OLLA_CHECK(memcmp(b, c, (size_t)n * sizeof *b) == 0);
    int64_t *sizes = malloc((size_t)n * sizeof *sizes);
    for (long i = 0; i < n; i++)
        sizes[i] = b[i].size;
    int64_t top = 0, below_1k = 0;
    for (long i = 0; i < n; i++) {
        top = sizes[i] > top ? sizes[i] : top;
        below_1k += sizes[i] < 1024;
        OLLA_CHECK(b[i].size > 0 && b[i].size % 64 == 0 && b[i].upper > b[i].lower);
    }
    OLLA_CHECK(below_1k > n / 2);        /* most are small */
    OLLA_CHECK(top >= 1000 * 128);       /* a few are over a thousand times the typical one */
    long nested = 0, repeated = 0;
    for (long i = 0; i < n && i < 2000; i++) {
        int inside = 0, twin = 0;
        for (long j = 0; j < n && !(inside && twin); j++) {
            if (j == i)
                continue;
            inside |= b[j].lower <= b[i].lower && b[i].upper <= b[j].upper &&
                      b[j].upper - b[j].lower >= 4 * (b[i].upper - b[i].lower);
            twin |= b[j].size == b[i].size && b[j].upper - b[j].lower == b[i].upper - b[i].lower &&
                    b[j].lower != b[i].lower;
        }
        nested += inside;
        repeated += twin;
    }
    OLLA_CHECK(nested > 1000);   /* of the first 2000 */
    OLLA_CHECK(repeated > 1500);
    free(sizes);
    free(b);
    free(c);
}

OLLA_TEST_MAIN(OLLA_T(test_inception_steps_reach_max_live), OLLA_T(test_densenet_steps_reach_max_live),
               OLLA_T(test_densenet_step_reached_backwards),
               OLLA_T(test_train_generator_shape), OLLA_T(test_compiler_generator_shape))
