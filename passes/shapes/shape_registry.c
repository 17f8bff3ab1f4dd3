/* olla-onnx: the list of operator-family rule tables used by shape
 * inference. Add one line per family to families[]. */
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

static const olla_shape_rule_entry *const families[] = {
    olla_shape_rules_elementwise,
    olla_shape_rules_manip,
    olla_shape_rules_reduce,
    olla_shape_rules_linalg,
    olla_shape_rules_control,
    olla_shape_rules_training,
    olla_shape_rules_conv,
    olla_shape_rules_norm,
    olla_shape_rules_rnn,
    olla_shape_rules_resize,
    olla_shape_rules_datadep,
    olla_shape_rules_quant,
    olla_shape_rules_random,
    olla_shape_rules_signal,
    olla_shape_rules_seq,
    olla_shape_rules_misc,
    olla_shape_rules_extra,
    olla_shape_rules_aten,
};

static int domain_match(const char *want, const char *have)
{
    if (!have || !*have || strcmp(have, "ai.onnx") == 0)
        return want[0] == '\0';
    return strcmp(want, have) == 0;
}

const olla_shape_rule_entry *const *olla_shape_rule_families(size_t *n)
{
    *n = sizeof families / sizeof families[0];
    return families;
}

olla_shape_rule_fn olla_shape_find_rule(const char *domain, const char *op_type)
{
    if (!op_type)
        return NULL;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const olla_shape_rule_entry *e = families[f]; e->op_type; e++)
            if (strcmp(e->op_type, op_type) == 0 && domain_match(e->domain, domain))
                return e->rule;
    return NULL;
}
