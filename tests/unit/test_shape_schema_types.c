/* Every shape rule against the type constraints of the schema it claims.
 *
 * The facts: schema_facts_onnx.h (generated from the onnx package's schemas
 * by tests/tools/schema_facts.py) and schema_facts_extra.h (written by hand
 * from the schemas of ONNX Runtime's contrib and training operators and of
 * ONNX operators newer than that package). Each row lists the formal inputs
 * and outputs (a type-constraint name or "=type", "?" optional, "*"
 * variadic) and the types each constraint allows.
 *
 * The test: every rule of every family table must have a row. For each type
 * variable bound by an input, and each tensor type it allows, the rule runs on
 * a one-node model whose inputs carry those types (with several input shapes:
 * unknown rank, rank 2, rank 4; with the optional inputs and without). Every
 * output element type the rule sets must be what the schema says: the type
 * bound to its variable by the inputs, the literal type, or for a variable
 * no input binds (Cast's T2...) one of the types it allows. */
#include "olla_test.h"
#include "passes/shapes/olla_shape_rules.h"
#include "shape_case.h"

typedef struct schema_fact {
    const char *domain, *op;
    int since;
    const char *inputs, *outputs, *constraints;
} schema_fact;

#include "schema_facts_extra.h"
#include "schema_facts_onnx.h"

#define MAX_WORDS 16
#define MAX_TYPES 64

typedef struct {
    char name[32];
    char types[MAX_TYPES][24]; /* "float", "seq(float)"... */
    int n;
} type_var;

typedef struct {
    char word[32]; /* a variable name or "=type" */
    int optional, variadic;
} formal;

typedef struct {
    const schema_fact *fact;
    type_var vars[MAX_WORDS];
    int n_vars;
    formal in[MAX_WORDS], out[MAX_WORDS];
    int n_in, n_out;
    long checks;
    int failures;
} rule_case;

static const schema_fact *find_fact(const char *domain, const char *op)
{
    const char *d = strcmp(domain, "ai.onnx") == 0 ? "" : domain;
    for (size_t i = 0; i < sizeof schema_facts_extra / sizeof schema_facts_extra[0]; i++)
        if (strcmp(schema_facts_extra[i].domain, d) == 0 && strcmp(schema_facts_extra[i].op, op) == 0)
            return &schema_facts_extra[i];
    for (size_t i = 0; i < sizeof schema_facts_onnx / sizeof schema_facts_onnx[0]; i++)
        if (strcmp(schema_facts_onnx[i].domain, d) == 0 && strcmp(schema_facts_onnx[i].op, op) == 0)
            return &schema_facts_onnx[i];
    return NULL;
}

static int parse_formals(const char *s, formal *f)
{
    size_t nw;
    char **w = olla_case_words(s, &nw);
    int n = 0;
    for (size_t i = 0; i < nw && n < MAX_WORDS; i++, n++) {
        size_t len = strlen(w[i]);
        f[n].optional = len && w[i][len - 1] == '?';
        f[n].variadic = len && w[i][len - 1] == '*';
        snprintf(f[n].word, sizeof f[n].word, "%.*s", (int)(len - (f[n].optional || f[n].variadic)), w[i]);
    }
    olla_case_free_words(w, nw);
    return n;
}

/* 1 when the onnx name is one the case builder knows. */
static int known_type(const char *name)
{
    for (size_t i = 0; i < sizeof olla_case_types / sizeof olla_case_types[0]; i++)
        if (strcmp(olla_case_types[i].name, name) == 0)
            return 1;
    return 0;
}

static void parse_case(const schema_fact *f, rule_case *rc)
{
    memset(rc, 0, sizeof *rc);
    rc->fact = f;
    rc->n_in = parse_formals(f->inputs, rc->in);
    rc->n_out = parse_formals(f->outputs, rc->out);
    size_t nw;
    char **w = olla_case_words(f->constraints, &nw);
    for (size_t i = 0; i < nw && rc->n_vars < MAX_WORDS; i++) {
        type_var *v = &rc->vars[rc->n_vars++];
        const char *colon = strchr(w[i], ':');
        snprintf(v->name, sizeof v->name, "%.*s", (int)(colon - w[i]), w[i]);
        for (const char *p = colon + 1; *p && v->n < MAX_TYPES;) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            snprintf(v->types[v->n], sizeof v->types[0], "%.*s", (int)len, p);
            const char *inner = strncmp(v->types[v->n], "seq(", 4) == 0 ? v->types[v->n] + 4 : v->types[v->n];
            char base[24];
            snprintf(base, sizeof base, "%.*s", (int)strcspn(inner, ")"), inner);
            if (known_type(base) && strncmp(v->types[v->n], "opt(", 4) != 0)
                v->n++;
            p = e ? e + 1 : p + len;
        }
    }
    olla_case_free_words(w, nw);
}

static type_var *var_of(rule_case *rc, const char *word)
{
    for (int i = 0; i < rc->n_vars; i++)
        if (strcmp(rc->vars[i].name, word) == 0)
            return &rc->vars[i];
    return NULL;
}

/* The type an input of variable v gets when v is not the one varied: float
 * when allowed, else the first allowed type. */
static const char *default_type(const type_var *v)
{
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->types[i], "float") == 0)
            return "float";
    return v->n ? v->types[0] : NULL;
}

/* The type bound to a word in this run ("" when none). */
static const char *bound_type(rule_case *rc, const char *word, const type_var *varied, const char *tau)
{
    if (word[0] == '=')
        return word + 1;
    type_var *v = var_of(rc, word);
    if (!v)
        return "";
    if (v == varied)
        return tau;
    const char *d = default_type(v);
    return d ? d : "";
}

/* 1 when one of the first n_given formal inputs has the variable word. */
static int input_binds(const rule_case *rc, const char *word, int n_given)
{
    for (int i = 0; i < rc->n_in && i < n_given; i++)
        if (strcmp(rc->in[i].word, word) == 0)
            return 1;
    return 0;
}

/* Element type and kind of a type name ("seq(float)"). */
static void type_code(const char *t, int32_t *elem, int *kind)
{
    *kind = strncmp(t, "seq(", 4) == 0 ? OLLA_VALUE_SEQUENCE : OLLA_VALUE_TENSOR;
    const char *inner = *kind == OLLA_VALUE_SEQUENCE ? t + 4 : t;
    *elem = olla_case_type(inner, strcspn(inner, ")"));
}

/* Checks output k of the run against the schema. */
static void check_output(rule_case *rc, const olla_shape_table *t, int k, const char *name, const type_var *varied,
                         const char *tau, const char *inputs, int n_given)
{
    const olla_value_type *v = olla_shape_lookup(t, name);
    if (!v || !v->elem_type || (v->kind != OLLA_VALUE_TENSOR && v->kind != OLLA_VALUE_SEQUENCE))
        return;
    const char *word = rc->out[k].word;
    type_var *ov = word[0] == '=' ? NULL : var_of(rc, word);
    int ok = 0;
    if (word[0] == '=' || (ov && input_binds(rc, word, n_given))) {
        int32_t e;
        int kind;
        type_code(bound_type(rc, word, varied, tau), &e, &kind);
        ok = v->elem_type == e && (int)v->kind == kind;
    } else if (ov) {
        for (int i = 0; i < ov->n && !ok; i++) {
            int32_t e;
            int kind;
            type_code(ov->types[i], &e, &kind);
            ok = v->elem_type == e && (int)v->kind == kind;
        }
    }
    rc->checks++;
    if (!ok && rc->failures++ < 3)
        fprintf(stderr, "%s%s%s: inputs '%s': output %d (%s) is %s %s, schema says %s\n", rc->fact->domain,
                rc->fact->domain[0] ? ":" : "", rc->fact->op, inputs, k, word,
                v->kind == OLLA_VALUE_SEQUENCE ? "seq of" : "tensor of",
                olla_elem_type_name(v->elem_type) ? olla_elem_type_name(v->elem_type) : "?", word);
}

/* Attributes without which a rule cannot know an output type. */
static const char *attrs_for(const schema_fact *f)
{
    static const struct {
        const char *op, *attrs;
    } table[] = {
        {"Cast", "to=i:1"},
        {"BitCast", "to=i:6"},
        {"Constant", "value_float=f:1"},
        {"Einsum", "equation=s:ij,jk->ik"},
        {"MaxRoiPool", "pooled_shape=ints:2,2"},
        {"RandomNormal", "shape=ints:2,3"},
        {"RandomUniform", "shape=ints:2,3"},
        {"LabelEncoder", "keys_int64s=ints:1,2 values_floats=floats:1,2"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op, f->op) == 0)
            return table[i].attrs;
    return "";
}

/* One run: builds the input words, infers, checks every output. A variadic
 * formal gets reps copies. */
static void run_once(rule_case *rc, const type_var *varied, const char *tau, const char *shape, int with_optional,
                     int reps_variadic)
{
    char inputs[1024] = "", outputs[256] = "";
    size_t at = 0;
    int n_given = 0;
    for (int i = 0, n = 0; i < rc->n_in; i++, n_given++) {
        if (rc->in[i].optional && !with_optional)
            break; /* later inputs cannot be given without this one */
        const char *ty = bound_type(rc, rc->in[i].word, varied, tau);
        if (!ty[0])
            return;
        int reps = rc->in[i].variadic ? reps_variadic : 1;
        for (int r = 0; r < reps; r++, n++) {
            int seq = strncmp(ty, "seq(", 4) == 0;
            at += (size_t)snprintf(inputs + at, sizeof inputs - at, "%si%d:%s%s", n ? " " : "", n, ty,
                                   seq ? "" : shape);
        }
    }
    int n_out = 0;
    for (int k = 0; k < rc->n_out; k++)
        for (int r = 0; r < (rc->out[k].variadic ? 2 : 1); r++, n_out++)
            snprintf(outputs + strlen(outputs), sizeof outputs - strlen(outputs), "%so%d:x", n_out ? " " : "",
                     n_out);
    char op[128];
    snprintf(op, sizeof op, "%s%s%s", rc->fact->domain, rc->fact->domain[0] ? ":" : "", rc->fact->op);
    olla_shape_case k = {op, rc->fact->since, inputs, attrs_for(rc->fact), outputs};
    Onnx__ModelProto *m = olla_case_model(&k);
    olla_shape_options opt = {.ignore_value_info = 1};
    olla_shape_table *t = NULL;
    olla_error err = {0};
    if (olla_infer_shapes(m, &opt, &t, &err) == OLLA_OK) {
        for (int o = 0, k2 = 0; k2 < rc->n_out; k2++)
            for (int r = 0; r < (rc->out[k2].variadic ? 2 : 1); r++, o++) {
                char name[16];
                snprintf(name, sizeof name, "o%d", o);
                check_output(rc, t, k2, name, varied, tau, inputs, n_given);
            }
    }
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

/* Every input-bound variable through every type it allows. */
static void run_rule(rule_case *rc)
{
    static const char *const shapes[] = {"", "[2,3]", "[2,3,4,5]"};
    for (int v = 0; v < rc->n_vars; v++) {
        type_var *var = &rc->vars[v];
        if (!input_binds(rc, var->name, rc->n_in))
            continue;
        for (int ti = 0; ti < var->n; ti++)
            for (size_t s = 0; s < 3; s++)
                for (int opt = 0; opt < 2; opt++)
                    for (int reps = 2; reps <= 4; reps++)
                        run_once(rc, var, var->types[ti], shapes[s], opt, reps);
    }
    run_once(rc, NULL, "", "[2,3]", 1, 2); /* rules with no input-bound variable */
}

OLLA_TEST(test_every_rule_matches_its_schema_types)
{
    size_t n_fam;
    const olla_shape_rule_entry *const *fam = olla_shape_rule_families(&n_fam);
    int rules = 0, unchecked = 0, failed = 0;
    long checks = 0;
    for (size_t f = 0; f < n_fam; f++)
        for (const olla_shape_rule_entry *e = fam[f]; e->op_type; e++) {
            rules++;
            const schema_fact *fact = find_fact(e->domain, e->op_type);
            if (!fact) {
                fprintf(stderr, "no schema facts for %s:%s; add its row\n", e->domain, e->op_type);
                OLLA_CHECK(0);
                continue;
            }
            rule_case *rc = calloc(1, sizeof *rc);
            parse_case(fact, rc);
            run_rule(rc);
            checks += rc->checks;
            unchecked += rc->checks == 0;
            if (rc->checks == 0)
                printf("no output type set on any input: %s:%s\n", e->domain, e->op_type);
            failed += rc->failures > 0;
            OLLA_CHECK_EQ_I64(rc->failures, 0);
            free(rc);
        }
    printf("%d rules, %ld output types checked, %d rules set none, %d rules disagree with their schema\n", rules,
           checks, unchecked, failed);
    OLLA_CHECK(checks > 10000);
}

OLLA_TEST_MAIN(OLLA_T(test_every_rule_matches_its_schema_types))
