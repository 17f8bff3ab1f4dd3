/* olla-onnx: a generator of compiler-traced training steps for the
 * placement tests and benchmarks (`bench/gen_family.c traced` prints them as
 * minimalloc CSV). Header-only, deterministic from a seed.
 *
 * What makes real compiler traces (MindSpore's and XLA's, 18k-62k buffers)
 * harder to place than place_gen_compiler's: the activations saved for the
 * backward pass are not freed in the mirror order of their creation. A
 * backward operator reads what several forward operators of its layer
 * saved, so within a layer the saved buffers cross (one made earlier is
 * freed earlier): at the busiest time, 13-38% of the size-weighted pairs of
 * live buffers cross in those traces, 0-1% in the other generators. With
 * crossing lifetimes no single stacking order suits both the forward and
 * the backward side. The weights cross too: all live from step 0, each
 * is freed at its own backward operator, before the activations saved
 * by the layers ahead of it.
 *
 * place_gen_traced builds: the weights, all live from step 0 (many buffers
 * starting together) to the backward operator that reads them; L layers
 * repeating a few patterns (the same sizes, shifted in time); in each
 * forward operator an output read by the next one, a workspace spanning
 * the operator with short temporaries nested in it, and saved activations
 * live until a backward operator: their own mirror operator, or with
 * probability cross percent any one of the same or an earlier layer (run
 * later in the backward pass); in each backward operator the gradient of
 * its input (read by the next backward operator), temporaries, and the
 * weight gradient, live until the optimizer's update at the end (updates
 * in forward order); in one operator in three a residual read again 3-30
 * operators later, and its gradient summed over as many backward
 * operators (the real traces hold 5-10% of their buffers, and more bytes
 * than max live, in lifetimes of 10-100 steps); and in one operator in
 * six of the first third of the layers a huge temporary (2-20% of the
 * step's max live, an attention's scores) in its forward and backward
 * steps: the largest buffers of the real traces are short-lived, and
 * their busiest time holds none. Sizes per
 * pattern slot, heavy-tailed: 2^U(lo, hi) bytes times 1-3, half of them
 * plus one (odd sizes, as XLA's). */
#ifndef OLLA_PLACE_GEN_TRACE_H
#define OLLA_PLACE_GEN_TRACE_H

#include "place_gen.h"

/* Operators per layer pattern at most, and patterns. */
enum { PLACE_TRACE_OPS = 24, PLACE_TRACE_PATTERNS = 3 };

/* One forward operator of a layer pattern: the sizes of its buffers. */
typedef struct place_trace_op {
    int64_t out, work, temp, saved[2], weight, grad, huge, skip;
    int nsaved, ntemp, has_weight; /* huge: 0 or a short temporary's size */
    int reach;                     /* skip: read again this many operators later (0: none) */
} place_trace_op;

/* A heavy-tailed size: 2^U(lo, hi) times 1-3, plus one half the time. */
static inline int64_t place_trace_size(place_gen_rng *r, int lo, int hi)
{
    /* one draw a statement: the order of the draws is fixed */
    int64_t b = (int64_t)1 << place_gen_int(r, lo, hi);
    b *= place_gen_int(r, 1, 3);
    return b + place_gen_int(r, 0, 1);
}

/* Fills the ops of one layer pattern; returns their number. */
static inline int place_trace_pattern(place_gen_rng *r, place_trace_op *ops)
{
    int k = (int)place_gen_int(r, 8, PLACE_TRACE_OPS);
    for (int j = 0; j < k; j++) {
        place_trace_op *o = &ops[j];
        o->out = place_trace_size(r, 10, 26);
        o->work = place_trace_size(r, 4, 22);
        o->temp = place_trace_size(r, 2, 14);
        o->ntemp = (int)place_gen_int(r, 0, 3);
        o->nsaved = (int)place_gen_int(r, 0, 2);
        o->saved[0] = place_gen_int(r, 0, 3) == 0 ? o->out : place_trace_size(r, 2, 8);
        o->saved[1] = place_trace_size(r, 4, 20);
        o->has_weight = place_gen_int(r, 0, 2) == 0;
        o->weight = place_trace_size(r, 8, 24);
        o->grad = o->weight;
        o->huge = place_gen_int(r, 0, 5) == 0; /* sized by place_trace_huge */
        o->reach = place_gen_int(r, 0, 2) == 0 ? (int)place_gen_int(r, 3, 30) : 0;
        o->skip = place_trace_size(r, 10, 26);
    }
    return k;
}

/* The huge temporaries of the patterns sized against the step's expected
 * max live (the saved activations and weights of every layer): 2-20% of it
 * each, as the largest short-lived buffers of the real traces (2-18%). */
static inline void place_trace_huge(place_gen_rng *r, place_trace_op pat[][PLACE_TRACE_OPS], int k, int64_t layers)
{
    int64_t live = 0;
    for (int p = 0; p < PLACE_TRACE_PATTERNS; p++)
        for (int j = 0; j < k; j++) {
            const place_trace_op *o = &pat[p][j];
            for (int s = 0; s < o->nsaved; s++)
                live += o->saved[s] * layers / PLACE_TRACE_PATTERNS;
            live += o->has_weight ? o->weight * layers / PLACE_TRACE_PATTERNS : 0;
        }
    for (int p = 0; p < PLACE_TRACE_PATTERNS; p++)
        for (int j = 0; j < k; j++)
            if (pat[p][j].huge) {
                pat[p][j].huge = live / 1000 * place_gen_int(r, 20, 200);
                pat[p][j].huge += place_gen_int(r, 0, 1);
            }
}

/* Times: forward operator j of layer l at fwd(l, j), its backward at
 * bwd(l, j); each forward operator takes 3 steps, each backward 4. */
typedef struct place_trace_clock {
    int64_t layers, ops, t_bwd, t_opt;
} place_trace_clock;

/* The first step of forward operator j of layer l. */
static inline int64_t place_trace_fwd(const place_trace_clock *c, int64_t l, int64_t j)
{
    return 1 + 3 * (l * c->ops + j);
}

/* The first step of the backward operator of (l, j). */
static inline int64_t place_trace_bwd(const place_trace_clock *c, int64_t l, int64_t j)
{
    return c->t_bwd + 4 * ((c->layers - 1 - l) * c->ops + (c->ops - 1 - j));
}

/* The free time of a buffer saved by forward operator (l, j): its mirror
 * backward operator, or (cross percent) any backward operator of its
 * layer or of an earlier one (run later in the backward pass). */
static inline int64_t place_trace_free(const place_trace_clock *c, place_gen_rng *r, int64_t l, int64_t j, int cross)
{
    if (place_gen_int(r, 0, 99) >= cross)
        return place_trace_bwd(c, l, j) + 2;
    int64_t l2 = place_gen_int(r, 0, l);
    int64_t j2 = place_gen_int(r, 0, c->ops - 1);
    return place_trace_bwd(c, l2, j2) + place_gen_int(r, 1, 3);
}

/* The buffers of forward operator (l, j) and of its backward operator. */
static inline int place_trace_layer_op(place_gen_list *bl, const place_trace_clock *c, place_gen_rng *r,
                                       const place_trace_op *o, int64_t l, int64_t j, int cross)
{
    int64_t f = place_trace_fwd(c, l, j), b = place_trace_bwd(c, l, j);
    int bad = place_gen_push(bl, f, f + 4, o->out) < 0; /* read by the next operator */
    bad |= place_gen_push(bl, f, f + 3, o->work) < 0;   /* workspace */
    for (int t = 0; t < o->ntemp; t++)                  /* temporaries nested in it */
        bad |= place_gen_push(bl, f + (t % 2), f + 1 + (t % 2) + place_gen_int(r, 0, 1), o->temp) < 0;
    for (int s = 0; s < o->nsaved; s++)
        bad |= place_gen_push(bl, f + 1, place_trace_free(c, r, l, j, cross), o->saved[s]) < 0;
    if (o->has_weight) {
        bad |= place_gen_push(bl, 0, b + 3, o->weight) < 0; /* the weight, from step 0 */
        int64_t upd = c->t_opt + 2 * (l * c->ops + j);      /* updated in forward order */
        bad |= place_gen_push(bl, b + 2, upd + 2, o->grad) < 0;
        bad |= place_gen_push(bl, upd, upd + 1, o->temp) < 0;
    }
    if (o->huge && 3 * l < c->layers) /* first layers only: in the forward and the backward operator */
        bad |= place_gen_push(bl, f + 1, f + 3, o->huge) < 0 || place_gen_push(bl, b + 1, b + 4, o->huge) < 0;
    if (o->reach) /* a residual, and its gradient summed over as many operators */
        bad |= place_gen_push(bl, f + 2, f + 3 * o->reach, o->skip) < 0 ||
               place_gen_push(bl, b + 2, b + 4 * o->reach, o->skip) < 0;
    bad |= place_gen_push(bl, b, b + 5, o->out) < 0; /* the input's gradient */
    for (int t = 0; t < o->ntemp; t++)
        bad |= place_gen_push(bl, b + 1 + (t % 3), b + 2 + (t % 3), o->temp) < 0;
    return bad ? -1 : 0;
}

/* A traced training step of about n buffers (see the top of this file),
 * with cross percent of the saved activations freed out of mirror order
 * (the real traces: about 30): returns the number of buffers (*out
 * malloc'ed), -1 when out of memory. */
static inline long place_gen_traced(long n, int cross, uint64_t seed, olla_buffer **out)
{
    place_gen_rng r = {seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL};
    place_trace_op pat[PLACE_TRACE_PATTERNS][PLACE_TRACE_OPS];
    int k = PLACE_TRACE_OPS, per_layer = 0;
    for (int p = 0; p < PLACE_TRACE_PATTERNS; p++) {
        int kp = place_trace_pattern(&r, pat[p]);
        k = kp < k ? kp : k; /* every layer runs the shortest pattern's count */
    }
    for (int j = 0; j < k; j++)
        per_layer += 4 + pat[0][j].ntemp * 2 + pat[0][j].nsaved + 3 * pat[0][j].has_weight + 2 * !!pat[0][j].reach;
    place_trace_clock c = {n / per_layer + 1, k, 0, 0};
    c.t_bwd = place_trace_fwd(&c, c.layers, 0) + 4;
    c.t_opt = place_trace_bwd(&c, -1, -1) + 4;
    place_trace_huge(&r, pat, k, c.layers);
    place_gen_list bl = {0};
    for (int64_t l = 0; l < c.layers; l++) {
        const place_trace_op *ops = pat[(l / 2) % PLACE_TRACE_PATTERNS]; /* runs of two alike */
        for (int64_t j = 0; j < k; j++)
            if (place_trace_layer_op(&bl, &c, &r, &ops[j], l, j, cross) < 0) {
                free(bl.b);
                return -1;
            }
    }
    *out = bl.b;
    return (long)bl.n;
}

#endif
