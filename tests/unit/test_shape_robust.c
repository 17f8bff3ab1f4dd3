/* Robustness of the shape rules of the convolution, normalization,
 * recurrent, resize, data-dependent, quantization, random, signal, sequence,
 * misc and extra families: every operator is run on many random nodes
 * (random input ranks and sizes including 0, symbolic and huge ones, random
 * constant inputs including negative and huge values, random attributes of
 * the names these operators read, with right and wrong types). Inference
 * must return OK or an input error, never crash (run under the sanitizers),
 * and every inferred dimension must be a size >= 0, a name or unknown. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "passes/shapes/olla_shape_rules.h"
#include "shape_case.h"

static const olla_shape_rule_entry *const tables[] = {
    olla_shape_rules_conv,   olla_shape_rules_norm,   olla_shape_rules_rnn,
    olla_shape_rules_resize, olla_shape_rules_datadep, olla_shape_rules_quant,
    olla_shape_rules_random, olla_shape_rules_signal, olla_shape_rules_seq,
    olla_shape_rules_misc,   olla_shape_rules_extra,
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n) /* in [0, n) */
{
    return olla_test_rng_below(&rng_state, n);
}

static const char *const attr_names[] = {
    "kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode", "group",
    "output_shape", "output_padding", "axis", "axes", "k", "to", "dtype", "shape",
    "hidden_size", "direction", "layout", "sizes", "scales", "pooled_shape", "output_height",
    "output_width", "sample_size", "num_groups", "q_num_heads", "kv_num_heads", "n_targets",
    "targets", "ngram_indexes", "inputdimensions", "cats_int64s", "stash_type", "training_mode",
    "onesided", "inverse", "keep_aspect_ratio_policy", "output_dtype", "output_datatype",
    "pixel_format", "stopwords", "values_int64s", "block_size", "height_scale", "width_scale",
};

static const char *const int_values[] = {"0", "1", "2", "3", "-1", "-7", "5", "4611686018427387904",
                                         "-9223372036854775807", "64"};

static size_t put_int_list(char *buf, size_t cap, int n)
{
    size_t k = 0;
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? "," : "", int_values[rnd(10)]);
    return k;
}

static void random_attrs(char *buf, size_t cap)
{
    size_t k = 0;
    int n = (int)rnd(6);
    buf[0] = '\0';
    for (int i = 0; i < n && k + 64 < cap; i++) {
        const char *name = attr_names[rnd(sizeof attr_names / sizeof attr_names[0])];
        switch (rnd(5)) {
        case 0:
            k += (size_t)snprintf(buf + k, cap - k, "%s%s=i:%s", k ? " " : "", name, int_values[rnd(10)]);
            break;
        case 1:
            k += (size_t)snprintf(buf + k, cap - k, "%s%s=ints:", k ? " " : "", name);
            static const int lens[] = {1, 2, 2, 3, 4, 6};
            k += put_int_list(buf + k, cap - k, lens[rnd(6)]);
            break;
        case 2:
            k += (size_t)snprintf(buf + k, cap - k, "%s%s=f:%s", k ? " " : "", name,
                                  rnd(2) ? "2.5" : "-1e30");
            break;
        case 3: {
            static const char *const s[] = {"SAME_UPPER", "VALID", "NOTSET", "bidirectional", "reverse",
                                            "not_larger", "Grayscale", "x"};
            k += (size_t)snprintf(buf + k, cap - k, "%s%s=s:%s", k ? " " : "", name, s[rnd(8)]);
            break;
        }
        default:
            k += (size_t)snprintf(buf + k, cap - k, "%s%s=floats:0.5,2,3,1e20", k ? " " : "", name);
        }
    }
}

static void random_inputs(char *buf, size_t cap, int n)
{
    static const char *const dims[] = {"0", "1", "2", "3", "4", "5", "8", "N", "?", "4611686018427387904"};
    static const char *const types[] = {"float", "int64", "uint8", "int32", "bool", "float16", "string"};
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k + 200 < cap; i++) {
        if (i > 0 && rnd(8) == 0) {
            k += (size_t)snprintf(buf + k, cap - k, "%s-", k ? " " : "");
            continue;
        }
        int konst = rnd(3) == 0;
        static const int ranks[] = {0, 1, 2, 3, 3, 4, 4, 4, 5};
        int rank = konst ? (int)rnd(2) : ranks[rnd(9)];
        const char *type = konst ? "int64" : types[rnd(7)];
        if (!konst && rnd(10) == 0) {
            k += (size_t)snprintf(buf + k, cap - k, "%si%d:seq(float)", k ? " " : "", i);
            continue;
        }
        k += (size_t)snprintf(buf + k, cap - k, "%si%d:%s[", k ? " " : "", i, type);
        int count = 1;
        for (int d = 0; d < rank; d++) {
            int len = (int)rnd(5) + 1;
            if (konst) {
                k += (size_t)snprintf(buf + k, cap - k, "%s%d", d ? "," : "", len);
                count *= len;
            } else {
                k += (size_t)snprintf(buf + k, cap - k, "%s%s", d ? "," : "", dims[rnd(10)]);
            }
        }
        k += (size_t)snprintf(buf + k, cap - k, "]");
        if (konst) {
            k += (size_t)snprintf(buf + k, cap - k, "=");
            k += put_int_list(buf + k, cap - k, count);
        }
    }
}

OLLA_TEST(test_random_nodes)
{
    char inputs[4096], attrs[2048], op[128];
    int runs = 0, ok = 0, rejected = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        for (const olla_shape_rule_entry *e = tables[t]; e->op_type; e++) {
            for (int iter = 0; iter < 400; iter++) {
                if (e->domain[0]) snprintf(op, sizeof op, "%s:%s", e->domain, e->op_type);
                else snprintf(op, sizeof op, "%s", e->op_type);
                int n_in = (int)rnd(9), n_out = 1 + (int)rnd(4);
                random_inputs(inputs, sizeof inputs, n_in);
                random_attrs(attrs, sizeof attrs);
                static const char *const outs[] = {"y0:float[]", "y0:float[] y1:float[]",
                                                   "y0:float[] y1:float[] y2:float[]",
                                                   "y0:float[] y1:float[] y2:float[] y3:float[]"};
                olla_shape_case k = {op, 1 + (int)rnd(27), inputs, attrs, outs[n_out - 1]};
                Onnx__ModelProto *m = olla_case_model(&k);
                olla_shape_options opt = {.ignore_value_info = 1};
                olla_shape_table *tab = NULL;
                olla_error err;
                olla_error_clear(&err);
                olla_status st = olla_infer_shapes(m, &opt, &tab, &err);
                runs++;
                if (st == OLLA_ERR_INPUT) rejected++;
                if (st != OLLA_OK && st != OLLA_ERR_INPUT)
                    fprintf(stderr, "%s inputs '%s' attrs '%s': status %d %s\n", op, inputs, attrs, (int)st,
                            err.message);
                OLLA_CHECK(st == OLLA_OK || st == OLLA_ERR_INPUT);
                for (size_t i = 0; st == OLLA_OK && i < olla_shape_count(tab); i++) {
                    const olla_value_type *v = olla_shape_at(tab, i);
                    int good = v->rank >= -1 && v->rank <= OLLA_SHAPE_MAX_RANK;
                    for (int d = 0; good && d < v->rank; d++)
                        good = v->dims[d].value >= 0 || v->dims[d].value == -1 || v->dims[d].param;
                    if (!good)
                        fprintf(stderr, "%s inputs '%s' attrs '%s': invalid type for '%s'\n", op, inputs,
                                attrs, olla_shape_name_at(tab, i));
                    OLLA_CHECK(good);
                }
                ok += st == OLLA_OK;
                olla_shape_table_free(tab);
                onnx__model_proto__free_unpacked(m, NULL);
            }
        }
    }
    printf("%d random nodes: %d inferred, %d rejected as malformed\n", runs, ok, rejected);
    OLLA_CHECK(ok > 0);
    OLLA_CHECK(rejected > 0);
}

OLLA_TEST_MAIN(OLLA_T(test_random_nodes))
