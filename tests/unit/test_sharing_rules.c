/* The buffer-sharing rules of ONNX Runtime (passes/runtime/olla_sharing.h):
 * views, in-place activations by opset and type, training operators. */
#include "olla_test.h"
#include "onnx.pb-c.h"
#include "passes/runtime/olla_sharing.h"

#define DT(name) ONNX__TENSOR_PROTO__DATA_TYPE__##name

/* The single rule for a node, or NULL when none or several apply. */
static const olla_share_rule *only_rule(const char *domain, const char *op, int64_t opset, int32_t type)
{
    const olla_share_rule *r[4];
    int n = olla_share_rules_for(domain, op, opset, type, r, 4);
    return n == 1 ? r[0] : NULL;
}

static int count_rules(const char *domain, const char *op, int64_t opset, int32_t type)
{
    return olla_share_rules_for(domain, op, opset, type, NULL, 0);
}

OLLA_TEST(test_reshape_alias_across_opsets)
{
    for (int opset = 5; opset <= 21; opset++) {
        const olla_share_rule *r = only_rule("", "Reshape", opset, DT(FLOAT));
        OLLA_CHECK(r != NULL);
        if (!r)
            continue;
        OLLA_CHECK_EQ_I64(r->kind, OLLA_SHARE_ALIAS);
        OLLA_CHECK_EQ_I64(r->input, 0);
        OLLA_CHECK_EQ_I64(r->output, 0);
        OLLA_CHECK(r->since_version <= opset && (r->last_version == 0 || opset <= r->last_version));
        /* Any element type, and the explicit "ai.onnx" domain name. */
        OLLA_CHECK(only_rule("ai.onnx", "Reshape", opset, DT(INT64)) == r);
        OLLA_CHECK(only_rule(NULL, "Reshape", opset, DT(STRING)) == r);
    }
    const olla_share_rule *r14 = only_rule("", "Reshape", 14, 0);
    OLLA_CHECK_STR_CONTAINS(r14 ? r14->source : NULL, "tensor/reshape.cc");
}

OLLA_TEST(test_views)
{
    const char *views[] = {"Squeeze", "Unsqueeze", "Flatten", "Identity"};
    for (int i = 0; i < 4; i++) {
        const olla_share_rule *r = only_rule("", views[i], 17, DT(FLOAT));
        OLLA_CHECK(r != NULL && r->kind == OLLA_SHARE_ALIAS && r->input == 0 && r->output == 0);
    }
    /* Dropout runs ORT's identity kernel but declares no alias. */
    OLLA_CHECK_EQ_I64(count_rules("", "Dropout", 9, DT(FLOAT)), 0);
}

OLLA_TEST(test_activations_in_place)
{
    const char *ops[] = {"Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "Tanh", "HardSigmoid",
                         "Softplus", "Softsign", "ThresholdedRelu", "Clip", "Cast", "Trilu"};
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++) {
        const olla_share_rule *r = only_rule("", ops[i], 17, DT(FLOAT));
        OLLA_CHECK(r != NULL && r->kind == OLLA_SHARE_INPLACE && r->input == 0 && r->output == 0);
        if (!r)
            fprintf(stderr, "no in-place rule for %s\n", ops[i]);
    }
}

OLLA_TEST(test_relu_types_by_opset)
{
    /* int8 and int32 kernels exist from opset 14 on; before, float and double only. */
    OLLA_CHECK(only_rule("", "Relu", 14, DT(INT8)) != NULL);
    OLLA_CHECK(only_rule("", "Relu", 14, DT(INT32)) != NULL);
    OLLA_CHECK(only_rule("", "Relu", 13, DT(DOUBLE)) != NULL);
    OLLA_CHECK_EQ_I64(count_rules("", "Relu", 13, DT(INT8)), 0);
    OLLA_CHECK_EQ_I64(count_rules("", "Relu", 17, DT(INT64)), 0);
    /* Float16 Relu shares only on ARM64 builds, which the table leaves out. */
    OLLA_CHECK_EQ_I64(count_rules("", "Relu", 17, DT(FLOAT16)), 0);
}

OLLA_TEST(test_binary_elementwise_not_in_place)
{
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Erf", "Pow", "Where", "Neg", "Exp"};
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++) {
        OLLA_CHECK_EQ_I64(count_rules("", ops[i], 17, DT(FLOAT)), 0);
        OLLA_CHECK_EQ_I64(count_rules("", ops[i], 17, 0), 0);
    }
}

OLLA_TEST(test_softmax_float_only)
{
    const char *ops[] = {"Softmax", "LogSoftmax"};
    const int opsets[] = {1, 11, 13, 17};
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 4; k++) {
            const olla_share_rule *r = only_rule("", ops[i], opsets[k], DT(FLOAT));
            OLLA_CHECK(r != NULL && r->kind == OLLA_SHARE_INPLACE);
            OLLA_CHECK_EQ_I64(count_rules("", ops[i], opsets[k], DT(DOUBLE)), 0);
        }
    }
    /* Without a type the rule is reported: the caller did not say. */
    OLLA_CHECK_EQ_I64(count_rules("", "Softmax", 13, 0), 1);
}

OLLA_TEST(test_training_ops)
{
    /* InPlaceAccumulatorV2: the buffer (input 0) comes back as output 1. */
    const olla_share_rule *r = only_rule("com.microsoft", "InPlaceAccumulatorV2", 1, DT(BOOL));
    OLLA_CHECK(r != NULL);
    if (r) {
        OLLA_CHECK_EQ_I64(r->kind, OLLA_SHARE_ALIAS);
        OLLA_CHECK_EQ_I64(olla_share_rule_input(r, 1), 0);
        OLLA_CHECK_EQ_I64(olla_share_rule_input(r, 0), -1);
        OLLA_CHECK_STR_CONTAINS(r->source, "orttraining/");
    }
    OLLA_CHECK_EQ_I64(count_rules("com.microsoft", "AdamWOptimizer", 1, 0), 3);
    OLLA_CHECK_EQ_I64(count_rules("com.microsoft", "BatchNormInternal", 1, DT(FLOAT)), 2);
    /* ORT's CPU gradient kernels declare no sharing. */
    OLLA_CHECK_EQ_I64(count_rules("com.microsoft", "ReluGrad", 1, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("com.microsoft", "SoftmaxGrad_13", 1, DT(FLOAT)), 0);
}

OLLA_TEST(test_contrib_in_place_on_other_input)
{
    const olla_share_rule *r = only_rule("com.microsoft", "FusedConv", 1, DT(FLOAT));
    OLLA_CHECK(r != NULL && r->kind == OLLA_SHARE_INPLACE && r->input == 3 && r->output == 0);
    OLLA_CHECK(only_rule("com.microsoft", "Trilu", 1, DT(INT64)) != NULL);
    OLLA_CHECK_EQ_I64(count_rules("com.microsoft", "Trilu", 1, DT(INT32)), 0);
}

OLLA_TEST(test_variadic_alias)
{
    const olla_share_rule *pass = only_rule("com.microsoft", "PassThrough", 1, 0);
    const olla_share_rule *wait = only_rule("com.microsoft", "WaitEvent", 1, 0);
    OLLA_CHECK(pass != NULL && wait != NULL);
    if (!pass || !wait)
        return;
    OLLA_CHECK_EQ_I64(olla_share_rule_input(pass, 0), 0);
    OLLA_CHECK_EQ_I64(olla_share_rule_input(pass, 3), 3);
    OLLA_CHECK_EQ_I64(olla_share_rule_input(wait, 0), 1);
    OLLA_CHECK_EQ_I64(olla_share_rule_input(wait, 2), 3);
}

OLLA_TEST(test_several_rules_and_truncation)
{
    const olla_share_rule *r[2] = {NULL, NULL};
    OLLA_CHECK_EQ_I64(olla_share_rules_for("", "BatchNormalization", 15, DT(FLOAT), r, 1), 2);
    OLLA_CHECK(r[0] != NULL && r[1] == NULL);
    OLLA_CHECK_EQ_I64(olla_share_rules_for("", "BatchNormalization", 15, DT(FLOAT), r, 2), 2);
    OLLA_CHECK(r[0] && r[1] && olla_share_rule_input(r[0], 1) == 3 && olla_share_rule_input(r[1], 2) == 4);
    /* BatchNormalization 7-8 declares no alias. */
    OLLA_CHECK_EQ_I64(count_rules("", "BatchNormalization", 8, DT(FLOAT)), 0);
}

OLLA_TEST(test_no_rule)
{
    OLLA_CHECK_EQ_I64(count_rules("", "NoSuchOp", 17, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("", NULL, 17, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("com.example", "Relu", 17, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("com.microsoft", "Relu", 1, DT(FLOAT)), 0);
    /* Opsets outside every registration. */
    OLLA_CHECK_EQ_I64(count_rules("", "Reshape", 0, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("", "Elu", 5, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("", "Celu", 11, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("", "BitCast", 25, DT(FLOAT)), 0);
    OLLA_CHECK_EQ_I64(count_rules("", "Relu", 5, DT(FLOAT)), 0);
    /* An element type outside the 64-bit mask matches no typed rule. */
    OLLA_CHECK_EQ_I64(count_rules("", "Relu", 17, 70), 0);
    OLLA_CHECK_EQ_I64(count_rules("", "Relu", 17, -1), 0);
}

static int rule_cmp(const olla_share_rule *a, const olla_share_rule *b)
{
    int c = strcmp(a->domain, b->domain);
    if (c == 0)
        c = strcmp(a->op_type, b->op_type);
    if (c == 0)
        c = a->since_version - b->since_version;
    if (c == 0)
        c = (int)a->kind - (int)b->kind;
    if (c == 0)
        c = a->output - b->output;
    if (c == 0)
        c = a->input - b->input;
    return c;
}

static int ranges_overlap(const olla_share_rule *a, const olla_share_rule *b)
{
    int a_last = a->last_version ? a->last_version : 1 << 30;
    int b_last = b->last_version ? b->last_version : 1 << 30;
    return a->since_version <= b_last && b->since_version <= a_last;
}

static int types_overlap(const olla_share_rule *a, const olla_share_rule *b)
{
    return a->elem_types == 0 || b->elem_types == 0 || (a->elem_types & b->elem_types) != 0;
}

OLLA_TEST(test_table_sorted_and_without_duplicates)
{
    size_t n = 0;
    const olla_share_rule *t = olla_share_rules(&n);
    OLLA_CHECK(n > 100);
    for (size_t i = 1; i < n; i++) {
        if (rule_cmp(&t[i - 1], &t[i]) >= 0)
            fprintf(stderr, "out of order: %s %s %d\n", t[i].domain, t[i].op_type, t[i].since_version);
        OLLA_CHECK(rule_cmp(&t[i - 1], &t[i]) < 0);
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            int same = strcmp(t[i].domain, t[j].domain) == 0 && strcmp(t[i].op_type, t[j].op_type) == 0 &&
                       t[i].kind == t[j].kind && t[i].input == t[j].input && t[i].output == t[j].output;
            if (same && ranges_overlap(&t[i], &t[j]) && types_overlap(&t[i], &t[j]))
                fprintf(stderr, "duplicate: %s %s %d and %d\n", t[i].domain, t[i].op_type, t[i].since_version,
                        t[j].since_version);
            OLLA_CHECK(!(same && ranges_overlap(&t[i], &t[j]) && types_overlap(&t[i], &t[j])));
        }
    }
}

OLLA_TEST(test_every_rule_well_formed_and_found)
{
    size_t n = 0;
    const olla_share_rule *t = olla_share_rules(&n);
    for (size_t i = 0; i < n; i++) {
        const olla_share_rule *r = &t[i];
        OLLA_CHECK(r->domain != NULL && r->op_type != NULL && r->op_type[0] != '\0');
        OLLA_CHECK(r->source != NULL && r->source[0] != '\0');
        OLLA_CHECK(strncmp(r->source, "onnxruntime/", 12) == 0 || strncmp(r->source, "orttraining/", 12) == 0);
        OLLA_CHECK(r->kind == OLLA_SHARE_ALIAS || r->kind == OLLA_SHARE_INPLACE);
        OLLA_CHECK(r->variadic == 0 || r->kind == OLLA_SHARE_ALIAS);
        OLLA_CHECK(r->since_version >= 1);
        OLLA_CHECK(r->last_version == 0 || r->last_version >= r->since_version);
        OLLA_CHECK(r->input >= 0 && r->output >= 0);
        /* The lookup finds each rule at both ends of its range, for a type it declares. */
        int32_t type = 0;
        while (r->elem_types && !((r->elem_types >> type) & 1))
            type++;
        int ends[2] = {r->since_version, r->last_version ? r->last_version : r->since_version + 10};
        for (int e = 0; e < 2; e++) {
            const olla_share_rule *got[8];
            int k = olla_share_rules_for(r->domain, r->op_type, ends[e], type, got, 8);
            int seen = 0;
            for (int m = 0; m < k && m < 8; m++)
                seen |= got[m] == r;
            OLLA_CHECK(seen);
        }
    }
}

OLLA_TEST_MAIN(OLLA_T(test_reshape_alias_across_opsets), OLLA_T(test_views), OLLA_T(test_activations_in_place),
               OLLA_T(test_relu_types_by_opset), OLLA_T(test_binary_elementwise_not_in_place),
               OLLA_T(test_softmax_float_only), OLLA_T(test_training_ops),
               OLLA_T(test_contrib_in_place_on_other_input), OLLA_T(test_variadic_alias),
               OLLA_T(test_several_rules_and_truncation), OLLA_T(test_no_rule),
               OLLA_T(test_table_sorted_and_without_duplicates), OLLA_T(test_every_rule_well_formed_and_found))
