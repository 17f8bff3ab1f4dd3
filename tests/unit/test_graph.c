/* Loader, graph, writer and checker on models built in memory. */
#include <stdio.h>
#include <unistd.h>

#include "model_builder.h"
#include "olla.h"
#include "olla_test.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/shapes/olla_shapes.h"

static olla_status load_mb(mb_model *mb, olla_model **m, olla_error *err)
{
    size_t len;
    uint8_t *buf = mb_pack(mb, &len);
    olla_status st = olla_model_load_buffer(buf, len, "test.onnx", ".", m, err);
    free(buf);
    return st;
}

static olla_status build_graph(mb_model *mb, olla_model **m, olla_graph **g, olla_shape_table **types,
                               olla_error *err)
{
    *g = NULL;
    *types = NULL;
    olla_status st = load_mb(mb, m, err);
    if (st != OLLA_OK)
        return st;
    st = olla_infer_shapes((*m)->proto, NULL, types, err);
    if (st != OLLA_OK)
        return st;
    olla_type_source src = olla_shape_type_source(*types);
    return olla_graph_build(*m, &src, g, err);
}

static void cleanup(mb_model *mb, olla_model *m, olla_graph *g, olla_shape_table *t)
{
    olla_graph_free(g);
    olla_shape_table_free(t);
    olla_model_free(m);
    mb_free(mb);
}

/* x -> Relu -> a -> Neg -> b ; a and b are outputs? only b */
static void chain(mb_model *mb)
{
    mb_init(mb, 17);
    mb_input(mb, "x", 4);
    mb_node(mb, "Relu", "r", "x", "a");
    mb_node(mb, "Neg", "n", "a", "b");
    mb_info(mb, "a", 8);
    mb_output(mb, "b", 4);
}

OLLA_TEST(test_chain_graph)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_graph *g = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    chain(&mb);
    OLLA_CHECK(build_graph(&mb, &m, &g, &t, &err) == OLLA_OK);
    if (g) {
        OLLA_CHECK_EQ_I64(g->n_ops, 2);
        OLLA_CHECK_EQ_I64(g->n_tensors, 3);
        int a = olla_strmap_get(&g->by_name, "a");
        /* value_info says 8 floats, inference says Relu of 4 floats: the
         * declared shape wins (a runtime allocates what the model declares),
         * with a warning naming both; so does b's declaration after it */
        OLLA_CHECK_EQ_I64(g->tensors[a].bytes, 32);
        OLLA_CHECK_EQ_I64(olla_shape_warning_count(t), 2);
        if (olla_shape_warning_count(t) == 2) {
            OLLA_CHECK_STR_CONTAINS(olla_shape_warning_at(t, 0), "'a'");
            OLLA_CHECK_STR_CONTAINS(olla_shape_warning_at(t, 0), "inferred float32[4]");
            OLLA_CHECK_STR_CONTAINS(olla_shape_warning_at(t, 0), "declares float32[8]");
        }
        OLLA_CHECK_EQ_I64(g->tensors[a].producer, 0);
        OLLA_CHECK_EQ_I64(g->tensors[a].n_consumers, 1);
        OLLA_CHECK_EQ_I64(g->consumer_list[g->tensors[a].first_consumer], 1);
        int x = olla_strmap_get(&g->by_name, "x");
        OLLA_CHECK(g->tensors[x].is_input && g->tensors[x].producer == -1);
        int b = olla_strmap_get(&g->by_name, "b");
        OLLA_CHECK(g->tensors[b].is_output);
    }
    cleanup(&mb, m, g, t);
}

OLLA_TEST(test_two_producers)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_graph *g = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    chain(&mb);
    mb_node(&mb, "Relu", "again", "x", "a");
    OLLA_CHECK(build_graph(&mb, &m, &g, &t, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "tensor 'a' is produced twice, by node 'r' (Relu) and by node 'again' (Relu)");
    cleanup(&mb, m, g, t);
}

OLLA_TEST(test_missing_input)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_graph *g = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    chain(&mb);
    mb_node(&mb, "Add", "add", "b,ghost", "c");
    OLLA_CHECK(build_graph(&mb, &m, &g, &t, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "node 'add' (Add) reads 'ghost', which no node, graph input or initializer produces");
    cleanup(&mb, m, g, t);
}

OLLA_TEST(test_cycle)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_graph *g = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    mb_init(&mb, 17);
    mb_input(&mb, "x", 4);
    mb_node(&mb, "Add", "p", "x,q_out", "p_out");
    mb_node(&mb, "Relu", "q", "p_out", "q_out");
    mb_output(&mb, "q_out", 4);
    OLLA_CHECK(build_graph(&mb, &m, &g, &t, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "the graph has a cycle through node");
    cleanup(&mb, m, g, t);
}

OLLA_TEST(test_optional_and_passthrough_outputs)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_graph *g = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    mb_init(&mb, 17);
    mb_input(&mb, "x", 4);
    mb_initializer(&mb, "w", 4);
    /* Clip with an omitted min, and Dropout with an omitted mask output */
    mb_node(&mb, "Clip", "clip", "x,,w", "c");
    mb_node(&mb, "Dropout", "drop", "c", "d,");
    mb_node(&mb, "Split", "split", "d", "s0,s1");
    mb_output(&mb, "s0", 2);
    mb_output(&mb, "x", 4); /* a graph input is also an output */
    mb_output(&mb, "w", 4); /* and an initializer */
    mb_info(&mb, "c", 4);
    mb_info(&mb, "d", 4);
    mb_info(&mb, "s1", 2);
    OLLA_CHECK(build_graph(&mb, &m, &g, &t, &err) == OLLA_OK);
    if (g) {
        const olla_op *clip = &g->ops[0];
        OLLA_CHECK_EQ_I64(clip->n_inputs, 3);
        OLLA_CHECK_EQ_I64(g->input_list[clip->first_input + 1], -1);
        const olla_op *drop = &g->ops[1];
        OLLA_CHECK_EQ_I64(drop->n_outputs, 2);
        OLLA_CHECK_EQ_I64(g->output_list[drop->first_output + 1], -1);
        OLLA_CHECK_EQ_I64(g->ops[2].n_outputs, 2);
        int x = olla_strmap_get(&g->by_name, "x"), w = olla_strmap_get(&g->by_name, "w");
        OLLA_CHECK(g->tensors[x].is_output && g->tensors[x].is_input);
        OLLA_CHECK(g->tensors[w].is_output && g->tensors[w].is_initializer);
    }
    cleanup(&mb, m, g, t);
}

/* If "if" reads cond; its then branch holds If "inner" (whose branches read
 * "deep" and x from the main graph) and an Add of the inner If's output
 * with "shallow". Returns the then branch. */
static Onnx__GraphProto *nested_ifs(mb_model *mb)
{
    mb_init(mb, 17);
    mb_input(mb, "cond", 1);
    mb_input(mb, "x", 4);
    mb_node(mb, "Relu", "early", "x", "deep");   /* read two levels down */
    mb_node(mb, "Neg", "mid", "x", "shallow");   /* read one level down */
    Onnx__NodeProto *iff = mb_node(mb, "If", "if", "cond", "y");
    Onnx__GraphProto *then_g = mb_subgraph(mb, iff, "then_branch");
    Onnx__NodeProto *inner = mb_node_in(mb, then_g, "If", "inner", "cond", "t_out");
    Onnx__GraphProto *inner_g = mb_subgraph(mb, inner, "then_branch");
    mb_node_in(mb, inner_g, "Identity", "leaf", "deep", "leaf_out");
    mb_push(mb, &inner_g->n_output, (void ***)&inner_g->output, mb_value(mb, "leaf_out", 1, -1, NULL));
    Onnx__GraphProto *inner_else = mb_subgraph(mb, inner, "else_branch");
    mb_node_in(mb, inner_else, "Identity", "leaf2", "x", "leaf2_out");
    mb_push(mb, &inner_else->n_output, (void ***)&inner_else->output, mb_value(mb, "leaf2_out", 1, -1, NULL));
    mb_node_in(mb, then_g, "Add", "sum", "t_out,shallow", "then_out");
    mb_push(mb, &then_g->n_output, (void ***)&then_g->output, mb_value(mb, "then_out", 1, -1, NULL));
    Onnx__GraphProto *else_g = mb_subgraph(mb, iff, "else_branch");
    mb_node_in(mb, else_g, "Identity", "e", "x", "else_out");
    mb_push(mb, &else_g->n_output, (void ***)&else_g->output, mb_value(mb, "else_out", 1, -1, NULL));
    mb_output(mb, "y", 4);
    return then_g;
}

OLLA_TEST(test_subgraph_outer_inputs_any_depth)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_graph *g = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    nested_ifs(&mb);
    OLLA_CHECK(build_graph(&mb, &m, &g, &t, &err) == OLLA_OK);
    if (g) {
        const olla_op *op = &g->ops[2];
        OLLA_CHECK_EQ_I64(op->n_explicit_inputs, 1);
        int seen_deep = 0, seen_shallow = 0, seen_x = 0;
        for (int k = 0; k < op->n_inputs; k++) {
            const char *name = g->tensors[g->input_list[op->first_input + k]].name;
            seen_deep += strcmp(name, "deep") == 0;
            seen_shallow += strcmp(name, "shallow") == 0;
            seen_x += strcmp(name, "x") == 0;
        }
        OLLA_CHECK_EQ_I64(seen_deep, 1);
        OLLA_CHECK_EQ_I64(seen_shallow, 1);
        OLLA_CHECK_EQ_I64(seen_x, 1);
        OLLA_CHECK_EQ_I64(op->n_inputs, 4); /* cond, deep, shallow, x */
    }
    cleanup(&mb, m, g, t);
}

static int tensor_in(const olla_graph *g, const char *name)
{
    for (int i = 0; i < g->n_tensors; i++)
        if (strcmp(g->tensors[i].name, name) == 0)
            return i;
    return -1;
}

/* The then branch built on its own: the values it reads from the main graph,
 * at any depth, are outer tensors (inputs, in no input list), typed from the
 * main graph; its own values are typed from the branch's record; a node's
 * proto is the branch's. */
OLLA_TEST(test_subgraph_built_on_its_own)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_graph *g = NULL, *sub = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    const Onnx__GraphProto *then_g = NULL;
    nested_ifs(&mb);
    OLLA_CHECK(build_graph(&mb, &m, &g, &t, &err) == OLLA_OK);
    if (g) {
        then_g = olla_graph_node_proto(g, 2)->attribute[0]->g; /* the loaded model's, not the builder's */
        OLLA_CHECK(olla_shape_has_graph(t, then_g));
        olla_shape_graph_source gs = {t, then_g};
        olla_type_source src = olla_shape_type_source_in(&gs);
        OLLA_CHECK(olla_graph_build_subgraph(m, then_g, &src, &sub, &err) == OLLA_OK);
    }
    if (sub) {
        OLLA_CHECK_EQ_I64(sub->n_ops, 2);
        OLLA_CHECK_EQ_I64(sub->n_graph_inputs, 0);
        OLLA_CHECK_EQ_I64(sub->n_graph_outputs, 1);
        OLLA_CHECK(sub->proto == then_g);
        OLLA_CHECK(strcmp(olla_graph_node_proto(sub, 1)->name, "sum") == 0);
        const char *outer[] = {"cond", "deep", "x", "shallow"};
        for (int k = 0; k < 4; k++) {
            int i = tensor_in(sub, outer[k]);
            OLLA_CHECK(i >= 0 && sub->tensors[i].is_outer && sub->tensors[i].is_input && sub->tensors[i].producer < 0);
            OLLA_CHECK(i >= 0 && sub->tensors[i].bytes == (k == 0 ? 4 : 16)); /* cond float[1], the rest float[4] */
        }
        int own = tensor_in(sub, "then_out");
        OLLA_CHECK(own >= 0 && !sub->tensors[own].is_outer && sub->tensors[own].producer == 1 &&
                   sub->tensors[own].is_output && sub->tensors[own].bytes == 16);
        /* the inner If reads cond, and deep and x for its branches */
        OLLA_CHECK_EQ_I64(sub->ops[0].n_explicit_inputs, 1);
        OLLA_CHECK_EQ_I64(sub->ops[0].n_inputs, 3);
        /* the main graph's value seen from the branch, a branch value unknown in the main graph */
        OLLA_CHECK(olla_shape_lookup_in(t, then_g, "shallow") == olla_shape_lookup(t, "shallow"));
        OLLA_CHECK(!olla_shape_has_graph(t, NULL) && olla_shape_has_graph(t, m->proto->graph));
        OLLA_CHECK(olla_shape_lookup_in(t, then_g, "t_out") != NULL && olla_shape_lookup(t, "t_out") == NULL);
    }
    olla_graph_free(sub);
    cleanup(&mb, m, g, t);
}

OLLA_TEST(test_bad_bytes)
{
    olla_model *m = NULL;
    olla_error err = {0};
    const char *text = "this is not a model\n";
    OLLA_CHECK(olla_model_load_buffer((const uint8_t *)text, strlen(text), "t.onnx", ".", &m, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "not an ONNX model");
    olla_error_clear(&err);
    OLLA_CHECK(olla_model_load_buffer((const uint8_t *)"", 0, "t.onnx", ".", &m, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "the file is empty");

    mb_model mb;
    chain(&mb);
    size_t len;
    uint8_t *buf = mb_pack(&mb, &len);
    olla_error_clear(&err);
    OLLA_CHECK(olla_model_load_buffer(buf, len / 2, "t.onnx", ".", &m, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "truncated");
    free(buf);
    mb.model.graph = NULL;
    buf = mb_pack(&mb, &len);
    olla_error_clear(&err);
    OLLA_CHECK(olla_model_load_buffer(buf, len, "t.onnx", ".", &m, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "the model has no graph");
    OLLA_CHECK(m == NULL);
    free(buf);
    mb_free(&mb);
}

OLLA_TEST(test_deep_nesting_refused)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_error err = {0};
    mb_init(&mb, 17);
    mb_input(&mb, "c", 1);
    Onnx__GraphProto *g = &mb.graph;
    for (int depth = 0; depth < 100; depth++) {
        Onnx__NodeProto *n = mb_node_in(&mb, g, "If", "if", "c", "o");
        g = mb_subgraph(&mb, n, "then_branch");
    }
    OLLA_CHECK(load_mb(&mb, &m, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "subgraphs are nested more than 64 deep");
    olla_model_free(m);
    mb_free(&mb);
}

OLLA_TEST(test_symbolic_dims_need_binding)
{
    mb_model mb;
    olla_model *m = NULL;
    olla_error err = {0};
    mb_init(&mb, 17);
    long long sym = -1;
    mb_push(&mb, &mb.graph.n_input, (void ***)&mb.graph.input, mb_value(&mb, "x", 1, 1, &sym));
    mb_node(&mb, "Relu", "r", "x", "y");
    mb_push(&mb, &mb.graph.n_output, (void ***)&mb.graph.output, mb_value(&mb, "y", 1, 1, &sym));
    OLLA_CHECK(load_mb(&mb, &m, &err) == OLLA_OK);
    olla_options opt;
    olla_options_init(&opt);
    olla_plan *plan = NULL;
    olla_report rep;
    OLLA_CHECK(olla_optimize(m, &opt, &plan, &rep, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "1 tensor ('y') has no size: it depends on graph input 'x', whose dimension N "
                                         "has no value; pass --input-shape x=N with a size in place of each name, or "
                                         "--dim N=N");
    olla_dim_binding bind = {"N", 10};
    opt.dims = &bind;
    opt.n_dims = 1;
    olla_error_clear(&err);
    OLLA_CHECK(olla_optimize(m, &opt, &plan, &rep, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(rep.arena_bytes, 64); /* 40 bytes rounded up to 64 */
    OLLA_CHECK_EQ_I64(rep.peak_bytes, 64);
    olla_plan_free(plan);
    olla_report_clear(&rep);
    olla_model_free(m);
    mb_free(&mb);
}

/* The written model re-parses to the input plus the olla.* metadata, and the
 * checker catches a plan whose live tensors overlap. */
OLLA_TEST(test_write_roundtrip_and_check)
{
    char dir[] = "/tmp/olla-test-XXXXXX";
    OLLA_CHECK(mkdtemp(dir) != NULL);
    char out[256];
    snprintf(out, sizeof out, "%s/out.onnx", dir);
    mb_model mb;
    olla_model *m = NULL, *back = NULL;
    olla_error err = {0};
    chain(&mb);
    OLLA_CHECK(load_mb(&mb, &m, &err) == OLLA_OK);
    olla_options opt;
    olla_options_init(&opt);
    opt.keep_order = 1;
    olla_plan *plan = NULL;
    olla_report rep;
    OLLA_CHECK(olla_optimize(m, &opt, &plan, &rep, &err) == OLLA_OK);
    OLLA_CHECK(olla_write_model(m, plan, out, &err) == OLLA_OK);
    OLLA_CHECK(olla_model_load(out, &back, &err) == OLLA_OK);
    if (back) {
        OLLA_CHECK_EQ_I64(back->proto->n_metadata_props, 3);
        OLLA_CHECK(olla_check_model(back, &opt, &err) == OLLA_OK);
        /* strip the metadata: the rest is byte-identical once packed */
        size_t n_props = back->proto->n_metadata_props;
        back->proto->n_metadata_props = 0;
        size_t l1 = onnx__model_proto__get_packed_size(m->proto), l2 = onnx__model_proto__get_packed_size(back->proto);
        OLLA_CHECK_EQ_I64(l1, l2);
        uint8_t *b1 = malloc(l1), *b2 = malloc(l2);
        onnx__model_proto__pack(m->proto, b1);
        onnx__model_proto__pack(back->proto, b2);
        OLLA_CHECK(l1 == l2 && memcmp(b1, b2, l1) == 0);
        free(b1);
        free(b2);
        back->proto->n_metadata_props = n_props;
        /* put 'b' on top of 'a' although both are live when Neg runs */
        Onnx__StringStringEntryProto *p = back->proto->metadata_props[2];
        OLLA_CHECK(strcmp(p->key, "olla.plan") == 0);
        char *bad = strdup(p->value);
        char *boff = strstr(bad, "\"name\":\"b\",\"offset\":");
        OLLA_CHECK(boff != NULL);
        if (boff) {
            char *digit = boff + strlen("\"name\":\"b\",\"offset\":");
            char *end = digit;
            while (*end >= '0' && *end <= '9')
                end++;
            *digit = '0';
            memmove(digit + 1, end, strlen(end) + 1);
        }
        char *saved = p->value;
        p->value = bad;
        olla_error_clear(&err);
        OLLA_CHECK(olla_check_model(back, &opt, &err) == OLLA_ERR_INPUT);
        OLLA_CHECK_STR_CONTAINS(err.message, "overlaps");
        p->value = saved;
        free(bad);
    }
    olla_plan_free(plan);
    olla_report_clear(&rep);
    olla_model_free(back);
    olla_model_free(m);
    mb_free(&mb);
    unlink(out);
    rmdir(dir);
}

OLLA_TEST_MAIN(OLLA_T(test_subgraph_built_on_its_own), OLLA_T(test_chain_graph), OLLA_T(test_two_producers), OLLA_T(test_missing_input), OLLA_T(test_cycle),
               OLLA_T(test_optional_and_passthrough_outputs), OLLA_T(test_subgraph_outer_inputs_any_depth),
               OLLA_T(test_bad_bytes), OLLA_T(test_deep_nesting_refused), OLLA_T(test_symbolic_dims_need_binding),
               OLLA_T(test_write_roundtrip_and_check))
