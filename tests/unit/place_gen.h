/* olla-onnx: generators of placement instances shaped like real ones, for
 * the placement tests and benchmarks (bench/gen_family.c prints them as
 * minimalloc CSV). Header-only, deterministic from a seed.
 *
 * place_gen_train: the buffers of one training step of a convolutional
 * network in PyTorch's own order, one buffer per tensor: the forward pass
 * (convolution, batch norm, ReLU, pooling, concatenation), the loss, the
 * backward pass in reverse (each operator's gradient reads what its forward
 * saved: a convolution its input, batch norm its input and statistics, ReLU
 * its output, pooling its indices, a concatenation slices its gradient),
 * gradients summed where a tensor had several readers, and an SGD update of
 * every parameter whose result lives to the end. With inplace set, ReLU
 * writes over the batch norm output it reads (ONNX Runtime's sharing).
 * Families: Inception-style modules (parallel branches of 1-3 convolutions
 * and a pooling branch, concatenated) and DenseNet-style blocks (each layer
 * reads the concatenation of every earlier output of its block), at a
 * width, depth, fan-in and batch drawn from the seed.
 *
 * place_gen_compiler: a compiler-like trace: layers repeating a few
 * patterns, each layer a nest of buffers (a few spanning the layer, shorter
 * ones inside them, many short temporaries inside those), outputs read by
 * the next layer and some by a later one, a few buffers live across many
 * layers, sizes heavy-tailed (a Pareto law, most small, a few huge). */
#ifndef OLLA_PLACE_GEN_H
#define OLLA_PLACE_GEN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"

typedef struct place_gen_rng {
    uint64_t s;
} place_gen_rng;

static inline uint64_t place_gen_next(place_gen_rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

/* Uniform in [lo, hi]. */
static inline int64_t place_gen_int(place_gen_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(place_gen_next(r) % (uint64_t)(hi - lo + 1));
}

/* A growing list of buffers. */
typedef struct place_gen_list {
    olla_buffer *b;
    size_t n, cap;
} place_gen_list;

static inline int place_gen_push(place_gen_list *l, int64_t lower, int64_t upper, int64_t size)
{
    if (l->n == l->cap) {
        size_t cap = l->cap * 2 + 256;
        olla_buffer *b = realloc(l->b, cap * sizeof *b);
        if (!b)
            return -1;
        l->b = b;
        l->cap = cap;
    }
    l->b[l->n++] = (olla_buffer){lower, upper, size, 0};
    return (int)(l->n - 1);
}

/* ---- training steps ---- */

enum { PLACE_GEN_INCEPTION, PLACE_GEN_DENSENET };

/* One tensor of the step: bytes, producing step, last reading step (-1:
 * none), and the tensor whose buffer it writes over (-1: its own). */
typedef struct place_gen_tensor {
    int64_t bytes;
    int first, last, over;
    int keep; /* a graph output: live to the end */
} place_gen_tensor;

typedef struct place_gen_step {
    place_gen_tensor *t;
    int nt, cap;
    int step; /* the next step */
    int batch;
} place_gen_step;

static inline int gen_tensor(place_gen_step *g, int64_t bytes)
{
    if (g->nt == g->cap) {
        int cap = g->cap * 2 + 256;
        place_gen_tensor *t = realloc(g->t, (size_t)cap * sizeof *t);
        if (!t)
            return -1;
        g->t = t;
        g->cap = cap;
    }
    g->t[g->nt] = (place_gen_tensor){bytes, g->step, -1, -1, 0};
    return g->nt++;
}

/* A new tensor that is a graph output (live to the end). */
static inline void gen_output(place_gen_step *g, int64_t bytes)
{
    int x = gen_tensor(g, bytes); /* may move g->t */
    if (x >= 0)
        g->t[x].keep = 1;
}

static inline void gen_read(place_gen_step *g, int x)
{
    if (x >= 0 && g->t[x].last < g->step)
        g->t[x].last = g->step;
}

/* A feature map: channels x side x side floats per image. */
typedef struct place_gen_fmap {
    int t; /* tensor */
    int c, side;
} place_gen_fmap;

static inline int64_t gen_fmap_bytes(const place_gen_step *g, int c, int side)
{
    return (int64_t)g->batch * c * side * side * 4;
}

/* The forward operators, recorded for the backward pass. */
enum { OP_CONV, OP_BN, OP_RELU, OP_POOL, OP_CAT };
typedef struct place_gen_op {
    int kind;
    int in[64], nin;     /* tensors read */
    int out, aux;        /* output, and saved statistics or indices */
    int64_t param_bytes; /* parameters updated by SGD */
} place_gen_op;

typedef struct place_gen_net {
    place_gen_step g;
    place_gen_op *ops;
    int nops, cap;
    int *readers; /* per tensor: forward readers (for gradient sums) */
    int inplace;
} place_gen_net;

static inline place_gen_op *gen_op(place_gen_net *n, int kind)
{
    if (n->nops == n->cap) {
        int cap = n->cap * 2 + 128;
        place_gen_op *o = realloc(n->ops, (size_t)cap * sizeof *o);
        if (!o)
            return NULL;
        n->ops = o;
        n->cap = cap;
    }
    place_gen_op *o = &n->ops[n->nops++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->out = o->aux = -1;
    return o;
}

/* conv (k x k, stride s) + batch norm + ReLU: the new feature map. */
static inline place_gen_fmap gen_conv_bn_relu(place_gen_net *n, place_gen_fmap x, int c, int k,
                                              int s)
{
    place_gen_step *g = &n->g;
    int side = (x.side + s - 1) / s;
    place_gen_op *o = gen_op(n, OP_CONV);
    o->in[o->nin++] = x.t;
    gen_read(g, x.t);
    o->out = gen_tensor(g, gen_fmap_bytes(g, c, side));
    o->param_bytes = (int64_t)c * x.c * k * k * 4;
    g->step++;
    int conv = o->out;
    o = gen_op(n, OP_BN);
    o->in[o->nin++] = conv;
    gen_read(g, conv);
    o->out = gen_tensor(g, gen_fmap_bytes(g, c, side));
    o->aux = gen_tensor(g, (int64_t)2 * c * 4); /* mean and inverse deviation */
    o->param_bytes = (int64_t)2 * c * 4;
    g->step++;
    int bn = o->out;
    o = gen_op(n, OP_RELU);
    o->in[o->nin++] = bn;
    gen_read(g, bn);
    o->out = gen_tensor(g, gen_fmap_bytes(g, c, side));
    if (n->inplace)
        g->t[o->out].over = bn;
    g->step++;
    return (place_gen_fmap){o->out, c, side};
}

static inline place_gen_fmap gen_pool(place_gen_net *n, place_gen_fmap x, int s)
{
    place_gen_step *g = &n->g;
    int side = (x.side + s - 1) / s;
    place_gen_op *o = gen_op(n, OP_POOL);
    o->in[o->nin++] = x.t;
    gen_read(g, x.t);
    o->out = gen_tensor(g, gen_fmap_bytes(g, x.c, side));
    o->aux = gen_tensor(g, 2 * gen_fmap_bytes(g, x.c, side)); /* int64 indices */
    g->step++;
    return (place_gen_fmap){o->out, x.c, side};
}

static inline place_gen_fmap gen_cat(place_gen_net *n, const place_gen_fmap *xs, int k)
{
    place_gen_step *g = &n->g;
    place_gen_op *o = gen_op(n, OP_CAT);
    int c = 0;
    for (int i = 0; i < k && i < 64; i++) {
        o->in[o->nin++] = xs[i].t;
        gen_read(g, xs[i].t);
        c += xs[i].c;
    }
    o->out = gen_tensor(g, gen_fmap_bytes(g, c, xs[0].side));
    g->step++;
    return (place_gen_fmap){o->out, c, xs[0].side};
}

/* An Inception module: 2-4 branches of 1-3 convolutions, and sometimes a
 * pooling branch with a 1x1 convolution, concatenated. */
static inline place_gen_fmap gen_inception(place_gen_net *n, place_gen_rng *r, place_gen_fmap x,
                                           int width)
{
    place_gen_fmap outs[6];
    int nb = (int)place_gen_int(r, 2, 4), k = 0;
    for (int b = 0; b < nb; b++) {
        place_gen_fmap y = x;
        int depth = (int)place_gen_int(r, 1, 3);
        for (int d = 0; d < depth; d++)
            y = gen_conv_bn_relu(n, y, width / 4 * (int)place_gen_int(r, 1, 4), d ? 3 : 1, 1);
        outs[k++] = y;
    }
    if (place_gen_int(r, 0, 1)) {
        place_gen_fmap y = gen_pool(n, x, 1);
        outs[k++] = gen_conv_bn_relu(n, y, width / 4, 1, 1);
    }
    return gen_cat(n, outs, k);
}

/* A DenseNet block: each layer (1x1 then 3x3 convolution) reads the
 * concatenation of the block's input and every earlier layer's output. */
static inline place_gen_fmap gen_dense_block(place_gen_net *n, place_gen_fmap x, int layers,
                                             int growth)
{
    place_gen_fmap feats[64];
    int k = 0;
    feats[k++] = x;
    for (int l = 0; l < layers && k < 64; l++) {
        place_gen_fmap in = k == 1 ? feats[0] : gen_cat(n, feats, k);
        place_gen_fmap y = gen_conv_bn_relu(n, in, 4 * growth, 1, 1);
        feats[k++] = gen_conv_bn_relu(n, y, growth, 3, 1);
    }
    return gen_cat(n, feats, k);
}

/* Adds the gradient contribution c to the gradient of tensor x, summing
 * with an earlier one (a new tensor) when there is one. */
static inline void gen_add_grad(place_gen_step *g, int *grad, int x, int c)
{
    if (grad[x] < 0) {
        grad[x] = c;
        return;
    }
    gen_read(g, grad[x]);
    gen_read(g, c);
    grad[x] = gen_tensor(g, g->t[c].bytes);
    g->step++;
}

/* The backward pass of the recorded operators, in reverse, and the SGD
 * updates (each update's result a graph output). Returns -1 when out of
 * memory. */
static inline int gen_backward(place_gen_net *n, int loss_grad, int logits)
{
    place_gen_step *g = &n->g;
    int cap_t = g->nt * 4 + 64;
    int *grad = malloc((size_t)cap_t * sizeof *grad);
    if (!grad)
        return -1;
    for (int i = 0; i < cap_t; i++)
        grad[i] = -1;
    grad[logits] = loss_grad;
    for (int k = n->nops - 1; k >= 0; k--) {
        place_gen_op *o = &n->ops[k];
        int dy = grad[o->out];
        if (dy < 0)
            continue; /* nothing flows back */
        if (g->nt + 8 + o->nin >= cap_t) {
            int grown = cap_t * 2 + g->nt;
            int *gr = realloc(grad, (size_t)grown * sizeof *gr);
            if (!gr) {
                free(grad);
                return -1;
            }
            for (int i = cap_t; i < grown; i++)
                gr[i] = -1;
            grad = gr;
            cap_t = grown;
        }
        gen_read(g, dy);
        switch (o->kind) {
        case OP_CONV: { /* reads its input: dx and the weight gradient */
            gen_read(g, o->in[0]);
            int dx = gen_tensor(g, g->t[o->in[0]].bytes);
            int dw = gen_tensor(g, o->param_bytes);
            g->step++;
            gen_add_grad(g, grad, o->in[0], dx);
            gen_read(g, dw); /* SGD: w - lr * dw */
            int scaled = gen_tensor(g, o->param_bytes);
            g->step++;
            gen_read(g, scaled);
            gen_output(g, o->param_bytes);
            g->step++;
            break;
        }
        case OP_BN: {
            gen_read(g, o->in[0]);
            gen_read(g, o->aux);
            int dx = gen_tensor(g, g->t[o->in[0]].bytes);
            int dp = gen_tensor(g, o->param_bytes);
            g->step++;
            gen_add_grad(g, grad, o->in[0], dx);
            gen_read(g, dp);
            gen_output(g, o->param_bytes);
            g->step++;
            break;
        }
        case OP_RELU: /* reads its output */
            gen_read(g, o->out);
            gen_add_grad(g, grad, o->in[0], gen_tensor(g, g->t[o->in[0]].bytes));
            g->step++;
            break;
        case OP_POOL:
            gen_read(g, o->aux);
            gen_add_grad(g, grad, o->in[0], gen_tensor(g, g->t[o->in[0]].bytes));
            g->step++;
            break;
        default: /* concatenation: one slice of dy per input */
            for (int i = 0; i < o->nin; i++) {
                gen_read(g, dy);
                gen_add_grad(g, grad, o->in[i], gen_tensor(g, g->t[o->in[i]].bytes));
                g->step++;
            }
            break;
        }
    }
    free(grad);
    return 0;
}

/* The buffers of one generated training step: family PLACE_GEN_INCEPTION or
 * PLACE_GEN_DENSENET, batch 1 or more, seed for widths, depths and fan-in.
 * Returns the number of buffers (*out malloc'ed), -1 when out of memory. */
static inline long place_gen_train(int family, int batch, int inplace, uint64_t seed,
                                   olla_buffer **out)
{
    place_gen_rng r = {seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL};
    place_gen_net n;
    memset(&n, 0, sizeof n);
    n.g.batch = batch;
    n.inplace = inplace;
    int side = (int)place_gen_int(&r, 3, 7) * 16; /* 48..112 */
    place_gen_fmap x = {gen_tensor(&n.g, 0), 3, side}; /* the input: not planned */
    n.g.step++;
    x = gen_conv_bn_relu(&n, x, 32 * (int)place_gen_int(&r, 1, 2), 3, 2);
    x = gen_pool(&n, x, 2);
    if (family == PLACE_GEN_INCEPTION) {
        int stages = (int)place_gen_int(&r, 2, 3), width = 64 * (int)place_gen_int(&r, 1, 3);
        for (int s = 0; s < stages; s++) {
            int mods = (int)place_gen_int(&r, 1, 4);
            for (int m = 0; m < mods; m++)
                x = gen_inception(&n, &r, x, width);
            if (s + 1 < stages)
                x = gen_pool(&n, x, 2);
            width *= 2;
        }
    } else {
        int blocks = (int)place_gen_int(&r, 2, 4), growth = 8 * (int)place_gen_int(&r, 2, 4);
        for (int b = 0; b < blocks; b++) {
            x = gen_dense_block(&n, x, (int)place_gen_int(&r, 3, 12), growth);
            if (b + 1 < blocks) {
                x = gen_conv_bn_relu(&n, x, x.c / 2, 1, 1);
                x = gen_pool(&n, x, 2);
            }
        }
    }
    /* global pooling, the classifier and the loss: small tensors */
    place_gen_step *g = &n.g;
    place_gen_op *o = gen_op(&n, OP_POOL);
    o->in[o->nin++] = x.t;
    gen_read(g, x.t);
    o->out = gen_tensor(g, (int64_t)batch * x.c * 4);
    g->step++;
    int pooled = o->out;
    o = gen_op(&n, OP_CONV); /* the fully connected layer */
    o->in[o->nin++] = pooled;
    gen_read(g, pooled);
    o->out = gen_tensor(g, (int64_t)batch * 1000 * 4);
    o->param_bytes = (int64_t)x.c * 1000 * 4;
    g->step++;
    int logits = o->out;
    gen_read(g, logits);
    int logp = gen_tensor(g, (int64_t)batch * 1000 * 4);
    g->step++;
    gen_read(g, logp);
    gen_output(g, 4); /* the loss */
    g->step++;
    gen_read(g, logp);
    int dlogits = gen_tensor(g, (int64_t)batch * 1000 * 4);
    g->step++;
    long count = -1;
    if (n.ops && gen_backward(&n, dlogits, logits) == 0) {
        /* buffers: a tensor written over another joins its buffer */
        int end = g->step;
        place_gen_list l = {0};
        int *buf = malloc((size_t)g->nt * sizeof *buf);
        count = buf ? 0 : -1;
        for (int i = 1; i < g->nt && count >= 0; i++) { /* tensor 0: the input */
            place_gen_tensor *t = &g->t[i];
            int last = t->keep ? end : t->last >= t->first ? t->last + 1 : t->first + 1;
            if (t->over > 0 && buf[t->over] >= 0 && t->bytes > 0) {
                olla_buffer *b = &l.b[buf[t->over]];
                buf[i] = buf[t->over];
                if (last > b->upper)
                    b->upper = last;
                continue;
            }
            buf[i] = -1;
            if (t->bytes == 0)
                continue; /* occupies nothing (and some placers reject it) */
            buf[i] = place_gen_push(&l, t->first, last, t->bytes);
            if (buf[i] < 0)
                count = -1;
        }
        free(buf);
        if (count >= 0) {
            *out = l.b;
            count = (long)l.n;
        } else {
            free(l.b);
        }
    }
    free(n.ops);
    free(g->t);
    return count;
}

/* ---- compiler traces ---- */

/* A heavy-tailed size in bytes: 64 * Pareto(alpha 1.1) from 1, capped at
 * 2^20 units (64 MiB), a multiple of 64. */
static inline int64_t place_gen_heavy(place_gen_rng *r)
{
    double u = ((double)(place_gen_next(r) >> 11) + 0.5) / 9007199254740992.0;
    double x = pow(u, -1.0 / 1.1);
    if (x > 1048576.0)
        x = 1048576.0;
    return 64 * (int64_t)x;
}

/* One layer pattern: buffers relative to the layer's start. */
typedef struct place_gen_slot {
    int lower, upper; /* within [0, len + reach) */
    int64_t size;
} place_gen_slot;

/* A compiler-like trace of about n buffers (see the top of this file):
 * patterns of layers drawn from the seed, each repeated; returns the number
 * of buffers (*out malloc'ed), -1 when out of memory. */
static inline long place_gen_compiler(long n, uint64_t seed, olla_buffer **out)
{
    place_gen_rng r = {seed * 0x9E3779B97F4A7C15ULL + 0xD1B54A32D192ED03ULL};
    enum { PATTERNS = 4, SLOTS = 400 };
    place_gen_slot pat[PATTERNS][SLOTS];
    int npat[PATTERNS], len[PATTERNS];
    for (int p = 0; p < PATTERNS; p++) {
        int L = (int)place_gen_int(&r, 24, 96), k = 0;
        len[p] = L;
        int64_t io = place_gen_heavy(&r) * 64;
        /* the layer's output, read at the start of the next layer */
        pat[p][k++] = (place_gen_slot){L - 2, L + 2, io};
        /* outer buffers spanning most of the layer, each with a nest */
        int outer = (int)place_gen_int(&r, 2, 5);
        for (int o = 0; o < outer && k < SLOTS - 1; o++) {
            int a = (int)place_gen_int(&r, 0, L / 4), b = (int)place_gen_int(&r, 3 * L / 4, L);
            pat[p][k++] = (place_gen_slot){a, b, place_gen_heavy(&r) * 32};
            int inner = (int)place_gen_int(&r, 2, 6);
            for (int i = 0; i < inner && k < SLOTS - 1; i++) {
                int c = (int)place_gen_int(&r, a, b - 2), d = (int)place_gen_int(&r, c + 1, b);
                pat[p][k++] = (place_gen_slot){c, d, place_gen_heavy(&r) * 8};
                int temps = (int)place_gen_int(&r, 2, 12);
                for (int t = 0; t < temps && k < SLOTS; t++) {
                    int e = (int)place_gen_int(&r, c, d - 1);
                    pat[p][k++] = (place_gen_slot){e, e + (int)place_gen_int(&r, 1, 3),
                                                   place_gen_heavy(&r) / 4 * 4 + 64};
                }
            }
        }
        npat[p] = k;
    }
    place_gen_list l = {0};
    int64_t t = 0;
    int64_t skip_size = 0, skip_from = -1;
    /* a few buffers live across the whole trace (weights, caches) */
    int longs = (int)place_gen_int(&r, 2, 8);
    long target = n;
    int64_t total_steps = 0;
    for (long made = 0, layer = 0; made < target; layer++) {
        int p = (int)((layer / 3) % PATTERNS); /* runs of three alike */
        for (int k = 0; k < npat[p]; k++)
            if (place_gen_push(&l, t + pat[p][k].lower, t + pat[p][k].upper, pat[p][k].size) < 0) {
                free(l.b);
                return -1;
            }
        made += npat[p];
        /* a skip connection every few layers: from here to a later layer */
        if (skip_from < 0 && place_gen_int(&r, 0, 3) == 0) {
            skip_from = t + len[p] - 1;
            skip_size = place_gen_heavy(&r) * 64;
        } else if (skip_from >= 0 && place_gen_int(&r, 0, 2) == 0) {
            if (place_gen_push(&l, skip_from, t + 2, skip_size) < 0) {
                free(l.b);
                return -1;
            }
            skip_from = -1;
            made++;
        }
        t += len[p];
        total_steps = t;
    }
    for (int k = 0; k < longs; k++) {
        int64_t a = place_gen_int(&r, 0, total_steps / 4), b = place_gen_int(&r, 3 * total_steps / 4, total_steps);
        if (place_gen_push(&l, a, b + 1, place_gen_heavy(&r) * 16) < 0) {
            free(l.b);
            return -1;
        }
    }
    *out = l.b;
    return (long)l.n;
}

#endif
