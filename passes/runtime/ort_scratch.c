/* olla-onnx: scratch memory of ONNX Runtime's CPU kernels.
 *
 * Each rule restates what one kernel of onnxruntime 1.30 allocates through
 * its temporary-space allocator (or a std::vector) during Compute, for one
 * intra-op thread; the files are named beside each rule. A block counts when
 * it is at least min_block bytes (the measurement counts blocks of 4 KiB and
 * more). Shapes come from the graph with the dims bound. */
#include "passes/runtime/ort_scratch.h"

#include <string.h>

#include "onnx.pb-c.h"

#define FLOAT_TYPE 1            /* TensorProto.FLOAT */
#define MLAS_CONV_WORKING_FLOATS (128 * 128) /* MLAS_SGEMM_STRIDEN * MLAS_SGEMM_STRIDEK, per thread */
#define MAX_SPATIAL 8

typedef struct dims_view {
    int rank;
    int64_t d[MAX_SPATIAL + 2];
} dims_view;

static int64_t block(int64_t bytes, int64_t min_block)
{
    return bytes >= min_block && bytes > 0 ? bytes : 0;
}

/* The sized dims of input/output slot `slot` of op (is_output 1 for outputs);
 * 0 when absent, of unknown size, or of rank above MAX_SPATIAL + 2. */
static int slot_dims(const olla_graph *g, int op, int slot, int is_output, dims_view *out)
{
    const olla_op *o = &g->ops[op];
    int n = is_output ? o->n_outputs : o->n_explicit_inputs;
    if (slot >= n)
        return 0;
    int t = is_output ? g->output_list[o->first_output + slot] : g->input_list[o->first_input + slot];
    if (t < 0 || g->tensors[t].bytes < 0)
        return 0;
    const olla_value_type *ty = &g->tensors[t].type;
    if (ty->rank < 0 || ty->rank > MAX_SPATIAL + 2)
        return 0;
    out->rank = ty->rank;
    for (int i = 0; i < ty->rank; i++) {
        if (ty->dims[i].value < 0)
            return 0;
        out->d[i] = ty->dims[i].value;
    }
    return 1;
}

static int32_t slot_elem(const olla_graph *g, int op, int slot)
{
    const olla_op *o = &g->ops[op];
    int t = slot < o->n_outputs ? g->output_list[o->first_output + slot] : -1;
    return t >= 0 ? g->tensors[t].type.elem_type : 0;
}

static int64_t product(const int64_t *d, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= d[i];
    return p;
}

static const Onnx__AttributeProto *attr(const olla_graph *g, int op, const char *name)
{
    const Onnx__NodeProto *n = olla_graph_node_proto(g, op);
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
            return n->attribute[i];
    return NULL;
}

static int64_t attr_int(const olla_graph *g, int op, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = attr(g, op, name);
    return a ? a->i : dflt;
}

/* Copies up to n ints of an attribute into out (filled with dflt first);
 * returns how many the attribute has. */
static size_t attr_ints(const olla_graph *g, int op, const char *name, int64_t *out, size_t n, int64_t dflt)
{
    for (size_t i = 0; i < n; i++)
        out[i] = dflt;
    const Onnx__AttributeProto *a = attr(g, op, name);
    if (!a)
        return 0;
    for (size_t i = 0; i < n && i < a->n_ints; i++)
        out[i] = a->ints[i];
    return a->n_ints;
}

/* ---- Conv ---- */

/* The convolution's geometry as MlasConvPrepare sees it (mlas/lib/convolve.cpp). */
typedef struct conv_geometry {
    int dims;                                /* spatial rank */
    int64_t in[MAX_SPATIAL], out[MAX_SPATIAL], kernel[MAX_SPATIAL];
    int64_t channels_per_group, filters_per_group;
    int strides_one, pads_zero, dilations_one;
} conv_geometry;

static int conv_geometry_of(const olla_graph *g, int op, conv_geometry *c)
{
    dims_view x, w, y;
    if (!slot_dims(g, op, 0, 0, &x) || !slot_dims(g, op, 1, 0, &w) || !slot_dims(g, op, 0, 1, &y))
        return 0;
    c->dims = x.rank - 2;
    if (c->dims < 1 || c->dims > 3 || w.rank != x.rank || y.rank != x.rank)
        return 0;
    int64_t group = attr_int(g, op, "group", 1);
    if (group < 1 || x.d[1] % group || w.d[0] % group)
        return 0;
    c->channels_per_group = x.d[1] / group;
    c->filters_per_group = w.d[0] / group;
    int64_t strides[MAX_SPATIAL], dil[MAX_SPATIAL], pads[2 * MAX_SPATIAL];
    attr_ints(g, op, "strides", strides, (size_t)c->dims, 1);
    attr_ints(g, op, "dilations", dil, (size_t)c->dims, 1);
    attr_ints(g, op, "pads", pads, (size_t)(2 * c->dims), 0);
    const Onnx__AttributeProto *ap = attr(g, op, "auto_pad");
    int same = ap && ap->s.len >= 4 && memcmp(ap->s.data, "SAME", 4) == 0;
    c->strides_one = c->pads_zero = c->dilations_one = 1;
    for (int i = 0; i < c->dims; i++) {
        c->in[i] = x.d[i + 2];
        c->out[i] = y.d[i + 2];
        c->kernel[i] = w.d[i + 2];
        int64_t pad_total = pads[i] + pads[i + c->dims];
        if (same) {
            int64_t need = (c->out[i] - 1) * strides[i] + (c->kernel[i] - 1) * dil[i] + 1 - c->in[i];
            pad_total = need > 0 ? need : 0;
        } else if (ap && ap->s.len == 5 && memcmp(ap->s.data, "VALID", 5) == 0) {
            pad_total = 0;
        }
        c->strides_one &= strides[i] == 1;
        c->dilations_one &= dil[i] == 1;
        c->pads_zero &= pad_total == 0;
    }
    return 1;
}

/* MlasConvPrepare's WorkingBufferSize (floats) for one thread. */
static int64_t conv_working_floats(const conv_geometry *c)
{
    int64_t k = c->channels_per_group * product(c->kernel, c->dims);
    int64_t out_size = product(c->out, c->dims);
    if (c->strides_one && c->pads_zero) {
        if (k == c->channels_per_group)
            return 0; /* pointwise: a direct GEMM */
        /* 1-D convolutions are promoted to 2-D with a leading dim of 1. */
        int64_t in0 = c->dims == 1 ? 1 : c->in[0], in1 = c->dims == 1 ? c->in[0] : c->in[1];
        int64_t k0 = c->dims == 1 ? 1 : c->kernel[0], k1 = c->dims == 1 ? c->kernel[0] : c->kernel[1];
        if (c->dims <= 2 && c->dilations_one && c->channels_per_group == 1 &&
            (k1 == in1 || (k0 == in0 && k1 == 1)))
            return 0; /* the kernel spans the input's width or height: a direct GEMM */
    }
    if (c->filters_per_group > out_size)
        return out_size * k; /* the whole image expanded, then one GEMM */
    return MLAS_CONV_WORKING_FLOATS; /* expanded segment by segment */
}

static int64_t conv_scratch(const olla_graph *g, int op, int64_t min_block)
{
    conv_geometry c;
    if (slot_elem(g, op, 0) != FLOAT_TYPE || !conv_geometry_of(g, op, &c))
        return 0;
    return block(4 * conv_working_floats(&c), min_block); /* providers/cpu/nn/conv.cc */
}

/* providers/cpu/nn/conv_transpose.cc: one column buffer of kernel_dim *
 * input spatial size elements, kernel_dim = output channels per group *
 * kernel size. */
static int64_t conv_transpose_scratch(const olla_graph *g, int op, int64_t min_block)
{
    dims_view x, w;
    if (slot_elem(g, op, 0) != FLOAT_TYPE || !slot_dims(g, op, 0, 0, &x) || !slot_dims(g, op, 1, 0, &w) ||
        x.rank < 3 || w.rank != x.rank)
        return 0;
    int64_t kernel_dim = w.d[1] * product(w.d + 2, w.rank - 2);
    return block(4 * kernel_dim * product(x.d + 2, x.rank - 2), min_block);
}

/* ---- MatMul ---- */

/* The number of GEMMs MatMulComputeHelper splits a MatMul into (1 when the
 * batch dims of B are all 1 and fold into A's rows). */
static int64_t matmul_gemms(const dims_view *a, const dims_view *b)
{
    if (a->rank >= 2 && b->rank >= 2 && a->rank >= b->rank && product(b->d, b->rank - 2) == 1)
        return 0; /* folded: no offset vectors */
    if (b->rank == 1)
        return a->rank >= 2 ? product(a->d, a->rank - 2) : 1;
    if (a->rank == 1)
        return product(b->d, b->rank - 2);
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t n = 1;
    for (int i = 0; i < r - 2; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        n *= da > db ? da : db;
    }
    return n;
}

/* providers/cpu/math/matmul_helper.h keeps three offset vectors (size_t per
 * GEMM); matmul.cc gives MLAS one 64-byte parameter block per GEMM, on the
 * heap beyond 2 GEMMs (float only). */
static int64_t matmul_scratch(const olla_graph *g, int op, int64_t min_block)
{
    dims_view a, b;
    if (!slot_dims(g, op, 0, 0, &a) || !slot_dims(g, op, 1, 0, &b) || a.rank < 1 || b.rank < 1)
        return 0;
    int64_t gemms = matmul_gemms(&a, &b);
    if (gemms == 0)
        return 0;
    int64_t bytes = 3 * block(8 * gemms, min_block);
    if (slot_elem(g, op, 0) == FLOAT_TYPE && gemms > 2)
        bytes += block(64 * gemms, min_block);
    return bytes;
}

/* ---- others ---- */

/* providers/cpu/nn/lrn.cc: a scale buffer the size of X and a padded square
 * of (C + size - 1) * H * W floats. */
static int64_t lrn_scratch(const olla_graph *g, int op, int64_t min_block)
{
    dims_view x;
    if (slot_elem(g, op, 0) != FLOAT_TYPE || !slot_dims(g, op, 0, 0, &x) || x.rank != 4)
        return 0;
    int64_t size = attr_int(g, op, "size", 1);
    return block(4 * product(x.d, 4), min_block) + block(4 * (x.d[1] + size - 1) * x.d[2] * x.d[3], min_block);
}

/* providers/cpu/math/softmax.cc, opset 13 and later: an axis other than the
 * last is transposed to the end, into a temporary input and output. */
static int64_t softmax_scratch(const olla_graph *g, int op, int64_t min_block)
{
    dims_view x;
    int64_t opset = olla_model_opset(g->model->proto, g->ops[op].domain);
    if (opset < 13 || !slot_dims(g, op, 0, 0, &x) || x.rank < 1)
        return 0;
    int64_t axis = attr_int(g, op, "axis", -1);
    if (axis < 0)
        axis += x.rank;
    if (axis == x.rank - 1)
        return 0;
    int t = g->input_list[g->ops[op].first_input];
    return 2 * block(g->tensors[t].bytes, min_block);
}

/* Elements of the broadcast of two shapes; -1 when they do not broadcast. */
static int64_t broadcast_elements(const dims_view *a, const dims_view *b)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t n = 1;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1;
        n *= da > db ? da : db;
    }
    return n;
}

/* providers/cpu/tensor/where_op.cc: condition ? X : 0 and !condition ? Y : 0
 * are computed into two temporary tensors (the broadcasts of the condition
 * with X and with Y), then merged into the output. */
static int64_t where_scratch(const olla_graph *g, int op, int64_t min_block)
{
    dims_view c, x, y;
    int bits = olla_elem_type_bits(slot_elem(g, op, 0));
    if (bits < 8 || !slot_dims(g, op, 0, 0, &c) || !slot_dims(g, op, 1, 0, &x) || !slot_dims(g, op, 2, 0, &y))
        return 0;
    int64_t nx = broadcast_elements(&c, &x), ny = broadcast_elements(&c, &y);
    if (nx < 0 || ny < 0)
        return 0;
    return block(nx * (bits / 8), min_block) + block(ny * (bits / 8), min_block);
}

int64_t olla_ort_kernel_scratch(const olla_graph *g, int op, int64_t min_block)
{
    const olla_op *o = &g->ops[op];
    if (o->domain && o->domain[0] && strcmp(o->domain, "ai.onnx") != 0)
        return 0;
    const char *t = o->op_type;
    if (strcmp(t, "Conv") == 0)
        return conv_scratch(g, op, min_block);
    if (strcmp(t, "ConvTranspose") == 0)
        return conv_transpose_scratch(g, op, min_block);
    if (strcmp(t, "MatMul") == 0)
        return matmul_scratch(g, op, min_block);
    if (strcmp(t, "LRN") == 0)
        return lrn_scratch(g, op, min_block);
    if (strcmp(t, "Softmax") == 0 || strcmp(t, "LogSoftmax") == 0)
        return softmax_scratch(g, op, min_block);
    if (strcmp(t, "Where") == 0)
        return where_scratch(g, op, min_block);
    return 0;
}
