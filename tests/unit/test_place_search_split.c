/* The exact search's split into independent parts on a chain of buffers
 * each live across nine time steps from every second step, so a section
 * boundary stays crossed until the buffers around it are placed: each node
 * reads the boundaries of the sections the last placed buffer changed,
 * not every section of the part, and the search places the chain at max
 * live within a work limit that reading them all at every node exceeds. */
#include <stdlib.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/place_internal.h"

static uint64_t rng_state = 0x6A09E667F3BCC909ULL;

/* n buffers, buffer i live on [2i, 2i + 9) with a size from 1 to 4. */
static void make_chain(olla_pitem *it, size_t n)
{
    for (size_t i = 0; i < n; i++)
        it[i] = (olla_pitem){2 * (int64_t)i, 2 * (int64_t)i + 9, olla_test_rng_range(&rng_state, 1, 4)};
}

/* A chain of 6,000 buffers with sizes from 1 to 4 searched at max live
 * by the schedule of both searches within 40 million units: placed there,
 * validly (reading every section of the part at each node, the search
 * spent 62 million units on it). */
OLLA_TEST(test_chain_search_within_limit)
{
    enum { N = 6000 };
    static olla_pitem it[N];
    static int64_t off[N];
    make_chain(it, N);
    int64_t live = olla_place_items_max_live(it, N);
    olla_pwork w = {40000000LL, 0, 0, 0};
    int r = olla_place_search(it, N, live, &w, off);
    fprintf(stderr, "chain of %d, max live %lld: outcome %d after %lld units\n", N, (long long)live, r,
            w.used);
    OLLA_CHECK_EQ_I64(r, OLLA_SEARCH_FOUND);
    if (r == OLLA_SEARCH_FOUND)
        olla_test_check_valid(it, N, off, live);
}

OLLA_TEST_MAIN(OLLA_T(test_chain_search_within_limit))
