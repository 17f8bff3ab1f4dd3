/* olla-onnx: shape rules for the recurrent operators RNN, GRU and LSTM.
 * X is [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1);
 * Y is [seq, dirs, batch, hidden] or [batch, seq, dirs, hidden]; Y_h (and
 * LSTM's Y_c) is [dirs, batch, hidden] or [batch, dirs, hidden]. */
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

static olla_status rnn_common(olla_shape_ctx *c, int gates)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    const char *dir = olla_shape_attr_string(c, "direction", "forward");
    int64_t dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    if (strcmp(dir, "forward") != 0 && strcmp(dir, "reverse") != 0 && dirs != 2)
        return olla_shape_fail(c, "attribute 'direction' has the unknown value '%s'", dir);
    int64_t layout = olla_shape_attr_int(c, "layout", 0);
    olla_dim hidden = olla_dim_unknown();
    if (olla_shape_attr_has(c, "hidden_size")) {
        hidden = olla_dim_known(olla_shape_attr_int(c, "hidden_size", 0));
    } else if (olla_shape_in_rank(c, 2) == 3) {
        hidden = olla_shape_in(c, 2)->dims[2];
    } else if (olla_shape_in_rank(c, 1) == 3) {
        hidden = olla_dim_div(c, olla_shape_in(c, 1)->dims[1], olla_dim_known(gates));
    }
    olla_dim seq = olla_dim_unknown(), batch = olla_dim_unknown();
    if (olla_shape_in_rank(c, 0) == 3) {
        const olla_value_type *x = olla_shape_in(c, 0);
        seq = x->dims[layout ? 1 : 0];
        batch = x->dims[layout ? 0 : 1];
    }
    olla_dim nd = olla_dim_known(dirs);
    olla_status st = OLLA_OK;
    if (olla_shape_has_output(c, 0)) {
        olla_dim y[4] = {seq, nd, batch, hidden};
        if (layout) {
            y[0] = batch;
            y[1] = seq;
            y[2] = nd;
        }
        st = olla_shape_set_out(c, 0, elem, 4, y);
    }
    for (int i = 1; st == OLLA_OK && i < olla_shape_n_outputs(c) && i <= 2; i++) {
        if (!olla_shape_has_output(c, i)) continue;
        olla_dim h[3] = {nd, batch, hidden};
        if (layout) {
            h[0] = batch;
            h[1] = nd;
        }
        st = olla_shape_set_out(c, i, elem, 3, h);
    }
    return st;
}

static olla_status rule_rnn(olla_shape_ctx *c) { return rnn_common(c, 1); }
static olla_status rule_gru(olla_shape_ctx *c) { return rnn_common(c, 3); }
static olla_status rule_lstm(olla_shape_ctx *c) { return rnn_common(c, 4); }

const olla_shape_rule_entry olla_shape_rules_rnn[] = {
    {"", "RNN", rule_rnn},
    {"", "GRU", rule_gru},
    {"", "LSTM", rule_lstm},
    {NULL, NULL, NULL}};
