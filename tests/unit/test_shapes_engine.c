/* The shape-inference engine on multi-node graphs: folding of shape
 * arithmetic, symbolic dims and bindings, node order, value_info merging and
 * warnings, unknown reasons, cycles, subgraphs (If/Loop/Scan), errors. */
#include "olla_test.h"
#include "shape_case.h"
#include "passes/shapes/olla_shape_rules.h"

typedef struct {
    const char *op;      /* "Op" or "domain:Op" */
    const char *inputs;  /* comma-separated, "" entries allowed */
    const char *outputs; /* comma-separated */
    const char *attrs;   /* as in shape_case.h */
} tnode;

static char **split_commas(const char *s, size_t *n)
{
    size_t cap = 4;
    char **w = calloc(cap, sizeof *w);
    *n = 0;
    if (!s || !*s)
        return w;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (*n + 1 >= cap) {
            cap *= 2;
            w = realloc(w, cap * sizeof *w);
        }
        w[(*n)++] = strndup(s, len);
        if (!e)
            break;
        s = e + 1;
    }
    return w;
}

static Onnx__NodeProto *make_node(const tnode *t)
{
    Onnx__NodeProto *n = calloc(1, sizeof *n);
    onnx__node_proto__init(n);
    const char *colon = strchr(t->op, ':');
    n->op_type = strdup(colon ? colon + 1 : t->op);
    n->domain = colon ? strndup(t->op, (size_t)(colon - t->op)) : strdup("");
    n->input = split_commas(t->inputs, &n->n_input);
    n->output = split_commas(t->outputs, &n->n_output);
    n->name = strdup(n->n_output ? n->output[0] : "node");
    size_t nw;
    char **w = olla_case_words(t->attrs, &nw);
    n->attribute = calloc(nw + 1, sizeof *n->attribute);
    for (size_t i = 0; i < nw; i++)
        n->attribute[n->n_attribute++] = olla_case_attr(w[i]);
    olla_case_free_words(w, nw);
    return n;
}

/* inputs: words as in shape_case.h; outputs: words "name" or "name:type[..]". */
static Onnx__GraphProto *make_graph(const char *inputs, const char *outputs, const tnode *nodes, size_t n_nodes)
{
    Onnx__GraphProto *g = calloc(1, sizeof *g);
    onnx__graph_proto__init(g);
    g->name = strdup("g");
    size_t nw;
    char **w = olla_case_words(inputs, &nw);
    g->input = calloc(nw + 1, sizeof *g->input);
    g->initializer = calloc(nw + 1, sizeof *g->initializer);
    for (size_t i = 0; i < nw; i++) {
        Onnx__TensorProto *init;
        g->input[g->n_input++] = olla_case_input(w[i], &init);
        if (init)
            g->initializer[g->n_initializer++] = init;
    }
    olla_case_free_words(w, nw);
    w = olla_case_words(outputs, &nw);
    g->output = calloc(nw + 1, sizeof *g->output);
    for (size_t i = 0; i < nw; i++) {
        if (strchr(w[i], ':')) {
            Onnx__TensorProto *init;
            g->output[g->n_output++] = olla_case_input(w[i], &init);
            continue;
        }
        Onnx__ValueInfoProto *vi = calloc(1, sizeof *vi);
        onnx__value_info_proto__init(vi);
        vi->name = strdup(w[i]);
        g->output[g->n_output++] = vi;
    }
    olla_case_free_words(w, nw);
    g->node = calloc(n_nodes + 1, sizeof *g->node);
    for (size_t i = 0; i < n_nodes; i++)
        g->node[g->n_node++] = make_node(&nodes[i]);
    return g;
}

static Onnx__ModelProto *make_model(Onnx__GraphProto *g)
{
    Onnx__ModelProto *m = calloc(1, sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = 8;
    m->graph = g;
    m->opset_import = calloc(2, sizeof *m->opset_import);
    const char *domains[2] = {"", "com.microsoft"};
    for (int i = 0; i < 2; i++) {
        Onnx__OperatorSetIdProto *os = calloc(1, sizeof *os);
        onnx__operator_set_id_proto__init(os);
        os->domain = strdup(domains[i]);
        os->has_version = 1;
        os->version = i == 0 ? 17 : 1;
        m->opset_import[m->n_opset_import++] = os;
    }
    return m;
}

/* Adds a value_info declaration "name:type[dims]". */
static void declare(Onnx__GraphProto *g, const char *word)
{
    Onnx__TensorProto *init;
    g->value_info = realloc(g->value_info, (g->n_value_info + 1) * sizeof *g->value_info);
    g->value_info[g->n_value_info++] = olla_case_input(word, &init);
}

static Onnx__AttributeProto *graph_attr(const char *name, Onnx__GraphProto *g)
{
    Onnx__AttributeProto *a = calloc(1, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = strdup(name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    a->g = g;
    return a;
}

static void add_attr(Onnx__NodeProto *n, Onnx__AttributeProto *a)
{
    n->attribute = realloc(n->attribute, (n->n_attribute + 1) * sizeof *n->attribute);
    n->attribute[n->n_attribute++] = a;
}

static olla_shape_table *infer(Onnx__ModelProto *m, const olla_dim_binding *b, int nb, int ignore_vi)
{
    olla_shape_options opt = {.dims = b, .n_dims = nb, .ignore_value_info = ignore_vi};
    olla_shape_table *t = NULL;
    olla_error err = {0};
    olla_status st = olla_infer_shapes(m, &opt, &t, &err);
    if (st != OLLA_OK)
        fprintf(stderr, "inference failed: %s\n", err.message);
    OLLA_CHECK(st == OLLA_OK);
    return t;
}

static int has_shape(const olla_shape_table *t, const char *name, const char *spec)
{
    char word[256], why[512] = "";
    snprintf(word, sizeof word, "%s:%s", name, spec);
    int ok = olla_case_check_output(t, word, why, sizeof why);
    if (!ok)
        fprintf(stderr, "%s\n", why);
    return ok;
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape keeps 'batch'. */
static const tnode fold_nodes[] = {
    {"Shape", "x", "s", ""},
    {"Gather", "s,i0", "b", ""},
    {"Unsqueeze", "b,ax", "bu", ""},
    {"Concat", "bu,m1", "shp", "axis=i:0"},
    {"Reshape", "x,shp", "y", ""},
    {"Relu", "y", "z", ""},
};
#define FOLD_INPUTS "x:float[batch,3,4] i0:int64[]=0 ax:int64[1]=0 m1:int64[1]=-1"

OLLA_TEST(test_fold_symbolic_chain)
{
    Onnx__ModelProto *m = make_model(make_graph(FOLD_INPUTS, "z", fold_nodes, 6));
    olla_shape_table *t = infer(m, NULL, 0, 0);
    OLLA_CHECK(has_shape(t, "y", "float[batch,12]"));
    OLLA_CHECK(has_shape(t, "shp", "int64[2]"));
    OLLA_CHECK(olla_value_bytes(olla_shape_lookup(t, "shp")) == 16);
    const char *why = olla_shape_unknown_reason(t, "z");
    OLLA_CHECK_STR_CONTAINS(why, "batch");
    OLLA_CHECK_STR_CONTAINS(why, "--dim batch=");
    OLLA_CHECK(olla_shape_unknown_reason(t, "shp") == NULL);
    olla_shape_table_free(t);
    /* with a binding everything is static */
    olla_dim_binding b = {"batch", 5};
    t = infer(m, &b, 1, 0);
    OLLA_CHECK(has_shape(t, "z", "float[5,12]"));
    OLLA_CHECK_EQ_I64(olla_value_bytes(olla_shape_lookup(t, "z")), 5 * 12 * 4);
    for (size_t i = 0; i < olla_shape_count(t); i++)
        OLLA_CHECK(olla_shape_unknown_reason(t, olla_shape_name_at(t, i)) == NULL);
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

/* Gather(s,1) * Gather(s,2) and Where(Equal(t,-1), Shape, t) feed Reshape and Expand. */
OLLA_TEST(test_fold_arithmetic_where_expand)
{
    static const tnode nodes[] = {
        {"Shape", "x", "s", ""},
        {"Gather", "s,i0", "g0", ""},
        {"Gather", "s,i1", "g1", ""},
        {"Gather", "s,i2", "g2", ""},
        {"Mul", "g1,g2", "p", ""},
        {"Unsqueeze", "g0,ax", "u0", ""},
        {"Unsqueeze", "p,ax", "up", ""},
        {"Concat", "u0,up", "c", "axis=i:0"},
        {"Reshape", "x,c", "flat", ""},
        {"Equal", "t,m1", "e", ""},
        {"Where", "e,s,t", "w", ""},
        {"Expand", "small,w", "big", ""},
        {"Cast", "s", "sf", "to=i:1"},
        {"Div", "s,s", "ones", ""},
        {"ReduceProd", "s", "numel", "keepdims=i:0"},
        {"Reshape", "x,numel1", "all", ""},
        {"Unsqueeze", "numel,ax", "numel1", ""},
    };
    Onnx__ModelProto *m = make_model(make_graph(
        "x:float[batch,3,4] small:float[1,3,1] i0:int64[]=0 i1:int64[]=1 i2:int64[]=2 ax:int64[1]=0 "
        "m1:int64[1]=-1 t:int64[3]=-1,3,4",
        "flat big", nodes, 17));
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "flat", "float[batch,12]"));
    OLLA_CHECK(has_shape(t, "big", "float[batch,3,4]"));
    OLLA_CHECK(has_shape(t, "sf", "float[3]"));
    OLLA_CHECK(has_shape(t, "all", "float[batch*12]"));
    olla_shape_table_free(t);
    olla_dim_binding b = {"batch", 7};
    t = infer(m, &b, 1, 1);
    OLLA_CHECK(has_shape(t, "all", "float[84]"));
    OLLA_CHECK(has_shape(t, "big", "float[7,3,4]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

/* ceil(7 / 2) = 4 elements via float arithmetic, Cast and ConstantOfShape. */
OLLA_TEST(test_fold_float_rounding)
{
    static const tnode nodes[] = {
        {"Div", "lim,two", "q", ""},  {"Ceil", "q", "cq", ""},         {"Cast", "cq", "n", "to=i:7"},
        {"Unsqueeze", "n,ax", "n1", ""}, {"ConstantOfShape", "n1", "y", ""}, {"Range", "z,n,one", "r", ""},
    };
    Onnx__ModelProto *m = make_model(make_graph(
        "lim:float[]=7 two:float[]=2 ax:int64[1]=0 z:int64[]=0 one:int64[]=1", "y r", nodes, 6));
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "y", "float[4]"));
    OLLA_CHECK(has_shape(t, "r", "int64[4]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_declared_dim_expressions_bound)
{
    static const tnode nodes[] = {{"Foo", "x", "y", ""}, {"Relu", "x", "r", ""}};
    Onnx__GraphProto *g = make_graph("x:float[batch*8,seq+1,(batch-1)*2]", "y", nodes, 2);
    declare(g, "y:float[batch*seq,unbound*2]");
    Onnx__ModelProto *m = make_model(g);
    olla_dim_binding b[2] = {{"batch", 4}, {"seq", 10}};
    olla_shape_table *t = infer(m, b, 2, 0);
    OLLA_CHECK(has_shape(t, "r", "float[32,11,6]"));
    OLLA_CHECK(has_shape(t, "y", "float[40,unbound*2]"));
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "y"), "--dim unbound=");
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_products_written_differently_are_equal)
{
    olla_dim a = {-1, "8*batch"}, b = {-1, "batch*8"}, c = {-1, "batch*seq*2"}, d = {-1, "2*seq*batch"},
             e = {-1, "batch*4"}, f = {-1, "batch+8"};
    OLLA_CHECK(olla_dim_equal(a, b));
    OLLA_CHECK(olla_dim_equal(c, d));
    OLLA_CHECK(!olla_dim_equal(a, e));
    OLLA_CHECK(!olla_dim_equal(b, f));
    OLLA_CHECK(!olla_dim_equal(a, olla_dim_unknown()));
    OLLA_CHECK(olla_dim_equal(olla_dim_known(3), olla_dim_known(3)));
    /* a declared "8*batch" broadcasts with an inferred "batch*8" */
    static const tnode nodes[] = {{"Shape", "x", "s", ""}, {"Gather", "s,i0", "g", ""}, {"Mul", "g,k8", "p", ""},
                                  {"Unsqueeze", "p,ax", "pu", ""}, {"Concat", "pu,k4", "shp", "axis=i:0"},
                                  {"Reshape", "z,shp", "r", ""}, {"Add", "r,y", "sum", ""}};
    Onnx__GraphProto *g = make_graph(
        "x:float[batch,2] z:float[batch,32] y:float[?,4] i0:int64[]=0 k8:int64[]=8 ax:int64[1]=0 "
        "k4:int64[1]=4",
        "sum", nodes, 7);
    /* y's first dim is "8*batch" (the case syntax reads a leading digit as a number) */
    Onnx__TensorShapeProto__Dimension *d0 = g->input[2]->type->tensor_type->shape->dim[0];
    d0->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    d0->dim_param = strdup("8*batch");
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "r", "float[batch*8,4]"));
    const olla_value_type *sum = olla_shape_lookup(t, "sum");
    OLLA_CHECK(sum && sum->rank == 2 && sum->dims[0].param && sum->dims[1].value == 4);
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_unordered_nodes_and_listing_order)
{
    tnode rev[6];
    for (int i = 0; i < 6; i++)
        rev[i] = fold_nodes[5 - i];
    Onnx__ModelProto *m = make_model(make_graph(FOLD_INPUTS, "z", rev, 6));
    olla_dim_binding b = {"batch", 2};
    olla_shape_table *t = infer(m, &b, 1, 0);
    OLLA_CHECK(has_shape(t, "z", "float[2,12]"));
    /* inputs, initializers (already listed as inputs), node outputs in node order */
    static const char *const want[] = {"x", "i0", "ax", "m1", "z", "y", "shp", "bu", "b", "s"};
    OLLA_CHECK_EQ_I64(olla_shape_count(t), 10);
    for (size_t i = 0; i < 10 && i < olla_shape_count(t); i++)
        OLLA_CHECK(strcmp(olla_shape_name_at(t, i), want[i]) == 0);
    OLLA_CHECK(olla_shape_at(t, 0)->source == OLLA_SRC_INPUT || olla_shape_at(t, 0)->source == OLLA_SRC_INITIALIZER);
    OLLA_CHECK(olla_shape_lookup(t, "nope") == NULL);
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_value_info_merge_and_warning)
{
    static const tnode nodes[] = {
        {"Relu", "x", "r", ""},
        {"Foo", "r", "f", ""},
        {"Relu", "f", "g", ""},
    };
    Onnx__GraphProto *g = make_graph("x:float[2,3]", "g", nodes, 3);
    declare(g, "r:float[2,4]"); /* disagrees: the declaration wins, with a warning */
    declare(g, "f:float[7]");   /* unsupported op: declared used */
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 0);
    OLLA_CHECK(has_shape(t, "r", "float[2,4]"));
    OLLA_CHECK(olla_shape_lookup(t, "r")->source == OLLA_SRC_VALUE_INFO);
    OLLA_CHECK_EQ_I64(olla_shape_warning_count(t), 1);
    OLLA_CHECK_STR_CONTAINS(olla_shape_warning_at(t, 0), "float32[2,3]");
    OLLA_CHECK_STR_CONTAINS(olla_shape_warning_at(t, 0), "float32[2,4]");
    OLLA_CHECK(has_shape(t, "f", "float[7]"));
    OLLA_CHECK(olla_shape_lookup(t, "f")->source == OLLA_SRC_VALUE_INFO);
    OLLA_CHECK(has_shape(t, "g", "float[7]"));
    olla_shape_table_free(t);
    /* ignoring value_info: the unsupported op's output and what follows are unknown, with the reason */
    t = infer(m, NULL, 0, 1);
    OLLA_CHECK_EQ_I64(olla_shape_warning_count(t), 0);
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "f"), "unsupported operator Foo");
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "g"), "unsupported operator Foo");
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_declared_symbolic_kept_when_inferred_unknown)
{
    static const tnode nodes[] = {{"Range", "a,b,d", "r", ""}, {"Relu", "r", "y", ""}};
    Onnx__GraphProto *g = make_graph("a:int64[] b:int64[] d:int64[]", "y:int64[n]", nodes, 2);
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 0);
    OLLA_CHECK(has_shape(t, "y", "int64[n]"));
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "r"), "run-time");
    olla_shape_table_free(t);
    olla_dim_binding b = {"n", 6};
    t = infer(m, &b, 1, 0);
    OLLA_CHECK(has_shape(t, "y", "int64[6]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_cycle_terminates)
{
    static const tnode nodes[] = {{"Add", "x,q", "p", ""}, {"Relu", "p", "q", ""}, {"Relu", "x", "ok", ""}};
    Onnx__ModelProto *m = make_model(make_graph("x:float[3]", "ok", nodes, 3));
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "ok", "float[3]"));
    OLLA_CHECK(olla_shape_lookup(t, "p") != NULL);
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_malformed_attribute_is_input_error)
{
    static const tnode nodes[] = {{"Concat", "x,x", "y", "axis=s:zero"}};
    Onnx__ModelProto *m = make_model(make_graph("x:float[3]", "y", nodes, 1));
    olla_shape_table *t = NULL;
    olla_error err = {0};
    OLLA_CHECK(olla_infer_shapes(m, NULL, &t, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK(t == NULL);
    OLLA_CHECK_STR_CONTAINS(err.message, "'axis'");
    OLLA_CHECK_STR_CONTAINS(err.message, "node 'y'");
    onnx__model_proto__free_unpacked(m, NULL);
    OLLA_CHECK(olla_infer_shapes(NULL, NULL, &t, &err) == OLLA_ERR_INPUT);
}

OLLA_TEST(test_if_merges_branches_with_outer_scope)
{
    static const tnode then_nodes[] = {{"Add", "x,x", "t", ""}};
    static const tnode else_nodes[] = {{"Concat", "x,x", "e", "axis=i:1"}};
    static const tnode nodes[] = {{"If", "c", "o", ""}, {"Relu", "x", "later", ""}};
    Onnx__GraphProto *g = make_graph("x:float[2,3] c:bool[]", "o", nodes, 2);
    add_attr(g->node[0], graph_attr("then_branch", make_graph("", "t", then_nodes, 1)));
    add_attr(g->node[0], graph_attr("else_branch", make_graph("", "e", else_nodes, 1)));
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "o", "float[2,?]"));
    OLLA_CHECK(olla_shape_lookup(t, "t") == NULL); /* subgraph values are not main-graph values */
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_if_with_constant_condition_takes_one_branch)
{
    static const tnode then_nodes[] = {{"Add", "x,x", "t", ""}};
    static const tnode else_nodes[] = {{"Concat", "x,x", "e", "axis=i:1"}};
    static const tnode nodes[] = {{"If", "c", "o", ""}};
    Onnx__GraphProto *g = make_graph("x:float[2,3] c:bool[]=0", "o", nodes, 1);
    add_attr(g->node[0], graph_attr("then_branch", make_graph("", "t", then_nodes, 1)));
    add_attr(g->node[0], graph_attr("else_branch", make_graph("", "e", else_nodes, 1)));
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "o", "float[2,6]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_loop_trip_count)
{
    /* body(i, cond, acc) -> (cond, acc + x, acc as scan output) */
    static const tnode body_nodes[] = {
        {"Identity", "cin", "cout", ""}, {"Add", "acc,x", "acc2", ""}, {"Identity", "acc", "scan", ""}};
    static const tnode nodes[] = {{"Loop", "M,,a0", "final,stacked", ""}};
    Onnx__GraphProto *g = make_graph("x:float[4] a0:float[4] M:int64[]=7", "final stacked", nodes, 1);
    add_attr(g->node[0], graph_attr("body", make_graph("i:int64[] cin:bool[] acc:float[4]", "cout acc2 scan",
                                                       body_nodes, 3)));
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "final", "float[4]"));
    OLLA_CHECK(has_shape(t, "stacked", "float[7,4]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
    /* a run-time trip count: the scan output's first dim is unknown with a reason */
    g = make_graph("x:float[4] a0:float[4] M:int64[]", "final stacked", nodes, 1);
    add_attr(g->node[0], graph_attr("body", make_graph("i:int64[] cin:bool[] acc:float[4]", "cout acc2 scan",
                                                       body_nodes, 3)));
    m = make_model(g);
    t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "stacked", "float[?,4]"));
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "stacked"), "Loop");
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_loop_growing_carried_value)
{
    /* acc grows by concatenation each iteration: its length is not static */
    static const tnode body_nodes[] = {
        {"Identity", "cin", "cout", ""}, {"Concat", "acc,x", "acc2", "axis=i:0"}, {"Identity", "acc", "scan", ""}};
    static const tnode nodes[] = {{"Loop", "M,,a0", "final,stacked", ""}};
    Onnx__GraphProto *g = make_graph("x:float[2] a0:float[1] M:int64[]=3", "final stacked", nodes, 1);
    add_attr(g->node[0], graph_attr("body", make_graph("i:int64[] cin:bool[] acc:float[1]", "cout acc2 scan",
                                                       body_nodes, 3)));
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "final", "float[?]"));
    OLLA_CHECK(has_shape(t, "stacked", "float[3,?]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

/* Loops nested 20 deep whose carried value grows: each level re-infers its
 * body until the carried type is stable; inference must stay small and the
 * growing value must come out with an unknown length. */
static Onnx__GraphProto *nested_loop(int depth)
{
    static const tnode with_loop[] = {
        {"Identity", "cin", "cout", ""}, {"Loop", "M,,acc", "fin", ""}, {"Concat", "fin,x", "acc2", "axis=i:0"}};
    static const tnode leaf[] = {{"Identity", "cin", "cout", ""}, {"Concat", "acc,x", "acc2", "axis=i:0"}};
    Onnx__GraphProto *g = depth == 0 ? make_graph("i:int64[] cin:bool[] acc:float[1]", "cout acc2", leaf, 2)
                                     : make_graph("i:int64[] cin:bool[] acc:float[1]", "cout acc2", with_loop, 3);
    if (depth > 0)
        add_attr(g->node[1], graph_attr("body", nested_loop(depth - 1)));
    return g;
}

OLLA_TEST(test_exponential_reinference_terminates)
{
    static const tnode nodes[] = {{"Identity", "x", "y", ""}, {"Loop", "M,,a0", "o", ""}};
    Onnx__GraphProto *g = make_graph("x:float[1] a0:float[1] M:int64[]=2", "o", nodes, 2);
    add_attr(g->node[1], graph_attr("body", nested_loop(20)));
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "y", "float[1]"));
    OLLA_CHECK(has_shape(t, "o", "float[?]"));
    OLLA_CHECK(olla_shape_unknown_reason(t, "o") != NULL);
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_scan_outputs)
{
    static const tnode body_nodes[] = {{"Add", "s,xi", "s2", ""}, {"Identity", "s2", "y", ""}};
    static const tnode nodes[] = {{"Scan", "s0,xs", "sf,ys", "num_scan_inputs=i:1"}};
    Onnx__GraphProto *g = make_graph("s0:float[2] xs:float[5,2]", "sf ys", nodes, 1);
    add_attr(g->node[0], graph_attr("body", make_graph("s:float[2] xi:float[2]", "s2 y", body_nodes, 2)));
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK(has_shape(t, "sf", "float[2]"));
    OLLA_CHECK(has_shape(t, "ys", "float[5,2]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_long_chain)
{
    enum { N = 20000 };
    tnode *nodes = calloc(N, sizeof *nodes);
    char (*names)[16] = calloc(N + 1, sizeof *names);
    OLLA_CHECK(nodes && names);
    if (!nodes || !names)
        return;
    snprintf(names[0], sizeof names[0], "x");
    for (int i = 0; i < N; i++) {
        snprintf(names[i + 1], sizeof names[i + 1], "v%d", i);
        nodes[i].op = i % 2 ? "Relu" : "Sigmoid";
        nodes[i].inputs = names[i];
        nodes[i].outputs = names[i + 1];
        nodes[i].attrs = "";
    }
    Onnx__ModelProto *m = make_model(make_graph("x:float[8,16]", "", nodes, N));
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK_EQ_I64(olla_shape_count(t), N + 1);
    OLLA_CHECK(has_shape(t, names[N], "float[8,16]"));
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
    free(nodes);
    free(names);
}

OLLA_TEST(test_aten_and_data_dependent_reasons)
{
    static const tnode nodes[] = {{"org.pytorch.aten:ATen", "x", "a", "operator=s:foo"}, {"Relu", "a", "b", ""}};
    Onnx__ModelProto *m = make_model(make_graph("x:float[3]", "b", nodes, 2));
    olla_shape_table *t = infer(m, NULL, 0, 1);
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "a"), "ATen");
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "b"), "ATen");
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST(test_elem_type_helpers)
{
    static const olla_shape_case cases[] = {{"Cast", 13, "x:int64[2]", "to=i:16", "y:bfloat16[2]"}};
    OLLA_SHAPE_CASES(cases);
    OLLA_CHECK(strcmp(olla_elem_type_name(1), "float32") == 0);
    OLLA_CHECK(strcmp(olla_elem_type_name(16), "bfloat16") == 0);
    OLLA_CHECK(olla_elem_type_name(0) == NULL);
    OLLA_CHECK_EQ_I64(olla_elem_type_bits(7), 64);
    OLLA_CHECK_EQ_I64(olla_elem_type_bits(22), 4);
    OLLA_CHECK_EQ_I64(olla_elem_type_bits(8), 0);
    olla_dim d[3] = {{3, NULL}, {5, NULL}, {-1, "n"}};
    olla_value_type v = {OLLA_VALUE_TENSOR, 22, 2, d, OLLA_SRC_INFERRED};
    OLLA_CHECK_EQ_I64(olla_value_bytes(&v), 8); /* 15 int4 = 7.5 bytes, rounded up */
    v.rank = 3;
    OLLA_CHECK_EQ_I64(olla_value_bytes(&v), -1);
    olla_dim big[2] = {{INT64_MAX / 2, NULL}, {4, NULL}};
    olla_value_type b = {OLLA_VALUE_TENSOR, 1, 2, big, OLLA_SRC_INFERRED};
    OLLA_CHECK_EQ_I64(olla_value_bytes(&b), -2);
}

/* Infers with the given options; returns the status and the error text. */
static olla_status infer_status(Onnx__ModelProto *m, int strict, char *msg, size_t size)
{
    olla_shape_options opt = {.strict = strict};
    olla_shape_table *t = NULL;
    olla_error err = {0};
    olla_status st = olla_infer_shapes(m, &opt, &t, &err);
    snprintf(msg, size, "%s", err.message);
    olla_shape_table_free(t);
    return st;
}

/* A declared type is never replaced by the inferred one, smaller or larger:
 * a runtime allocates what the model declares. */
OLLA_TEST(test_declared_type_wins_over_inferred)
{
    static const tnode nodes[] = {
        {"Cast", "x", "small", "to=i:9"}, /* bool[4] inferred, int64[4] declared */
        {"Cast", "x", "big", "to=i:7"},   /* int64[4] inferred, bool[4] declared */
    };
    Onnx__GraphProto *g = make_graph("x:float[4]", "small:int64[4] big", nodes, 2);
    declare(g, "big:bool[4]");
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 0);
    OLLA_CHECK(has_shape(t, "small", "int64[4]"));
    OLLA_CHECK(has_shape(t, "big", "bool[4]"));
    OLLA_CHECK_EQ_I64(olla_value_bytes(olla_shape_lookup(t, "small")), 32);
    OLLA_CHECK_EQ_I64(olla_shape_warning_count(t), 2);
    for (size_t i = 0; i < olla_shape_warning_count(t) && i < 2; i++) {
        const char *w = olla_shape_warning_at(t, i);
        OLLA_CHECK_STR_CONTAINS(w, "(node '");
        OLLA_CHECK_STR_CONTAINS(w, "Cast)");
        OLLA_CHECK_STR_CONTAINS(w, "inferred ");
        OLLA_CHECK_STR_CONTAINS(w, "the model declares ");
    }
    OLLA_CHECK_STR_CONTAINS(olla_shape_warning_at(t, 1), "inferred int64[4] but the model declares bool[4]");
    olla_shape_table_free(t);
    char msg[1024];
    OLLA_CHECK(infer_status(m, 1, msg, sizeof msg) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(msg, "--strict-shapes");
    onnx__model_proto__free_unpacked(m, NULL);
}

/* A partial declaration keeps what it knows and takes the rest from the
 * inference; a partial one whose rank contradicts the inference is refused. */
OLLA_TEST(test_partial_declaration_merged_or_refused)
{
    static const tnode nodes[] = {{"Relu", "x", "r", ""}};
    Onnx__GraphProto *g = make_graph("x:float[2,3]", "r", nodes, 1);
    declare(g, "r:float[?,5]");
    Onnx__ModelProto *m = make_model(g);
    olla_shape_table *t = infer(m, NULL, 0, 0);
    OLLA_CHECK(has_shape(t, "r", "float[2,5]"));
    OLLA_CHECK_EQ_I64(olla_shape_warning_count(t), 1);
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);

    g = make_graph("x:float[2,3]", "r", nodes, 1);
    declare(g, "r:float[?]");
    m = make_model(g);
    char msg[1024];
    OLLA_CHECK(infer_status(m, 0, msg, sizeof msg) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(msg, "'r' (node 'r', Relu): inferred float32[2,3] but the model declares float32[?]");
    OLLA_CHECK_STR_CONTAINS(msg, "no complete size");
    onnx__model_proto__free_unpacked(m, NULL);
}

/* One value declared twice with contradicting types is refused. */
OLLA_TEST(test_contradicting_declarations_refused)
{
    static const tnode nodes[] = {{"Relu", "x", "r", ""}};
    Onnx__GraphProto *g = make_graph("x:float[2,3] ", "r:float[2,3]", nodes, 1);
    declare(g, "r:float[3,2]");
    Onnx__ModelProto *m = make_model(g);
    char msg[1024];
    OLLA_CHECK(infer_status(m, 0, msg, sizeof msg) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(msg, "'r' is declared twice with different types");
    onnx__model_proto__free_unpacked(m, NULL);
}

OLLA_TEST_MAIN(OLLA_T(test_declared_type_wins_over_inferred), OLLA_T(test_partial_declaration_merged_or_refused),
               OLLA_T(test_contradicting_declarations_refused), OLLA_T(test_fold_symbolic_chain), OLLA_T(test_fold_arithmetic_where_expand), OLLA_T(test_fold_float_rounding), OLLA_T(test_declared_dim_expressions_bound), OLLA_T(test_products_written_differently_are_equal), OLLA_T(test_unordered_nodes_and_listing_order),
               OLLA_T(test_value_info_merge_and_warning), OLLA_T(test_declared_symbolic_kept_when_inferred_unknown),
               OLLA_T(test_cycle_terminates), OLLA_T(test_malformed_attribute_is_input_error),
               OLLA_T(test_if_merges_branches_with_outer_scope),
               OLLA_T(test_if_with_constant_condition_takes_one_branch), OLLA_T(test_loop_trip_count),
               OLLA_T(test_loop_growing_carried_value), OLLA_T(test_exponential_reinference_terminates), OLLA_T(test_scan_outputs), OLLA_T(test_long_chain), OLLA_T(test_aten_and_data_dependent_reasons),
               OLLA_T(test_elem_type_helpers))
