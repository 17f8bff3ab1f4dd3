/* olla-onnx: shape rules for random generators. The shape comes from the
 * 'shape' attribute or from the input (the *Like variants, Bernoulli); the
 * element type from 'dtype' (float by default, the input's for *Like). */
#include "passes/shapes/olla_shape_rules.h"

static olla_status rule_random(olla_shape_ctx *c)
{
    int32_t elem = (int32_t)olla_shape_attr_int(c, "dtype", OLLA_DT_FLOAT);
    const int64_t *s = NULL;
    int64_t n = olla_shape_attr_ints(c, "shape", &s);
    if (n < 0) return olla_shape_fail(c, "attribute 'shape' is missing");
    if (n > OLLA_SHAPE_MAX_RANK) return olla_shape_fail(c, "attribute 'shape' has too many entries");
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        if (s[i] < 0) return olla_shape_fail(c, "attribute 'shape' has a negative entry");
        dims[i] = olla_dim_known(s[i]);
    }
    return olla_shape_set_out(c, 0, elem, (int)n, dims);
}

/* RandomNormalLike, RandomUniformLike, Bernoulli. */
static olla_status rule_random_like(olla_shape_ctx *c)
{
    int32_t elem = (int32_t)olla_shape_attr_int(c, "dtype", 0);
    if (!elem) elem = olla_shape_in_elem(c, 0);
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x) return olla_shape_set_out(c, 0, elem, -1, NULL);
    return olla_shape_set_out(c, 0, elem, x->rank, x->dims);
}

/* Multinomial: [batch, sample_size], int32 by default. */
static olla_status rule_multinomial(olla_shape_ctx *c)
{
    int32_t elem = (int32_t)olla_shape_attr_int(c, "dtype", OLLA_DT_INT32);
    olla_dim dims[2] = {olla_dim_unknown(), olla_dim_known(olla_shape_attr_int(c, "sample_size", 1))};
    if (olla_shape_in_rank(c, 0) == 2) dims[0] = olla_shape_in(c, 0)->dims[0];
    return olla_shape_set_out(c, 0, elem, 2, dims);
}

const olla_shape_rule_entry olla_shape_rules_random[] = {
    {"", "RandomNormal", rule_random},
    {"", "RandomUniform", rule_random},
    {"", "RandomNormalLike", rule_random_like},
    {"", "RandomUniformLike", rule_random_like},
    {"", "Bernoulli", rule_random_like},
    {"", "Multinomial", rule_multinomial},
    {NULL, NULL, NULL}};
