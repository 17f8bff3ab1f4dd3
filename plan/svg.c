/* olla-onnx: a picture of the plan, as SVG.
 *
 * Two panels, one above the other, sharing the step axis:
 * - live bytes at each step for the input order (grey) and the planned
 *   order (blue), with three dashed levels: the input order's peak, the
 *   planned peak and the lower bound on any order's peak;
 * - the arena: one box per planned tensor, its steps across, its offsets up.
 *
 * Invariants a reader (and tests/cli/test_svg.sh, in a browser) can rely on:
 * every value is drawn where its axis says (a level's line sits at the
 * height the y ticks give its byte count); both panels have ticks with
 * values and units on both axes; no two labels overlap. The level labels
 * live in a column right of the plot, pushed apart when their values are
 * close; tensor names are drawn only inside boxes wide enough for them, in
 * a monospace font whose width is known, and never over another name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla_plan.h"
#include "util/olla_file.h"

#define SVG_W 1200
#define MARGIN_L 100
#define PLOT_W 880
#define LABEL_X (MARGIN_L + PLOT_W + 10) /* the level labels' column */
#define LIVE_TOP 80
#define LIVE_H 260
#define ARENA_TOP (LIVE_TOP + LIVE_H + 90)
#define ARENA_H 520
#define SVG_H (ARENA_TOP + ARENA_H + 60)
#define MAX_POINTS 1500 /* long orders are drawn by the maximum of each bucket */
#define NAME_LABELS 12
#define NAME_FONT 10
#define NAME_CHAR_W 6.3 /* monospace at 10 px: 6.0 px a character, and a margin */
#define LEVEL_GAP 15.0  /* between two level labels' centres */

/* A linear axis: values 0..max drawn over a length in pixels. */
typedef struct {
    double max;        /* the value at the axis' far end: a whole number of steps */
    double step;       /* between ticks, in the value's unit */
    double unit;       /* 1, 1024, 1024^2 or 1024^3 for bytes; 1 for steps */
    const char *name;  /* unit name after each tick value, or "" */
    int decimals;
} axis;

typedef struct {
    FILE *f;
    const olla_plan *plan;
    int n;           /* steps (at least 1) */
    axis steps;      /* across, both panels */
    axis live;       /* up, live bytes */
    axis arena;      /* up, offsets */
} svg_ctx;

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, f);
        }
    }
}

static void human(int64_t b, char *buf, size_t n)
{
    if (b >= 1024LL * 1024 * 1024)
        snprintf(buf, n, "%.2f GiB", (double)b / (1024.0 * 1024 * 1024));
    else if (b >= 1024 * 1024)
        snprintf(buf, n, "%.2f MiB", (double)b / (1024.0 * 1024));
    else if (b >= 1024)
        snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
    else
        snprintf(buf, n, "%lld B", (long long)b);
}

/* ---- axes ---- */

/* About six ticks of 1, 2 or 5 times a power of ten (in the unit). */
static axis make_axis(double vmax, double unit, const char *name)
{
    axis a = {0, 0, unit, name, 0};
    double top = vmax / unit > 0 ? vmax / unit : 1;
    double raw = top / 6, mag = pow(10, floor(log10(raw))), f = raw / mag;
    a.step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
    if (unit == 1 && !name[0] && a.step < 1)
        a.step = 1; /* whole steps */
    a.max = ceil(top / a.step - 1e-9) * a.step * unit;
    a.decimals = a.step >= 1 ? 0 : (int)ceil(-log10(a.step) - 1e-9);
    return a;
}

static axis bytes_axis(double vmax)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double unit = 1;
    int u = 0;
    while (u < 4 && vmax >= unit * 1024) {
        unit *= 1024;
        u++;
    }
    return make_axis(vmax, unit, names[u]);
}

/* Pixels from the axis' start for a value. */
static double along(const axis *a, double v, double length)
{
    return length * v / a->max;
}

static void tick_label(const axis *a, double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.*f%s%s", a->decimals, v / a->unit, a->name[0] ? " " : "", a->name);
}

/* Ticks with values on the left edge of a panel, and light grid lines. */
static void y_ticks(const svg_ctx *c, const axis *a, int top, int height, const char *cls)
{
    fprintf(c->f, "<g class=\"%s\" font-size=\"11\" fill=\"#333\">\n", cls);
    for (int k = 0; k * a->step * a->unit <= a->max * (1 + 1e-9); k++) {
        double v = k * a->step * a->unit, y = top + height - along(a, v, height);
        char lab[48];
        tick_label(a, v, lab, sizeof lab);
        fprintf(c->f,
                "<g class=\"tick\"><line x1=\"%d\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#555\"/>"
                "<line x1=\"%d\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#e4e4e4\"/>"
                "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%s</text></g>\n",
                MARGIN_L - 5, MARGIN_L, y, y, MARGIN_L, MARGIN_L + PLOT_W, y, y, MARGIN_L - 8, y + 4, lab);
    }
    fprintf(c->f, "</g>\n");
}

/* Step ticks below a panel, and the axis title. */
static void x_ticks(const svg_ctx *c, int bottom, const char *title)
{
    const axis *a = &c->steps;
    fprintf(c->f, "<g class=\"x-ticks\" font-size=\"11\" fill=\"#333\">\n");
    for (int k = 0; k * a->step <= a->max * (1 + 1e-9); k++) {
        double x = MARGIN_L + along(a, k * a->step, PLOT_W);
        fprintf(c->f,
                "<g class=\"tick\"><line x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"%d\" stroke=\"#555\"/>"
                "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%.0f</text></g>\n",
                x, x, bottom, bottom + 5, x, bottom + 17, k * a->step);
    }
    fprintf(c->f, "</g>\n<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">", MARGIN_L + PLOT_W / 2,
            bottom + 34);
    xml_text(c->f, title);
    fprintf(c->f, "</text>\n");
}

static void y_title(const svg_ctx *c, int top, int height, const char *title)
{
    int mid = top + height / 2;
    fprintf(c->f, "<text x=\"22\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 22 %d)\" text-anchor=\"middle\">",
            mid, mid);
    xml_text(c->f, title);
    fprintf(c->f, "</text>\n");
}

/* ---- panel 1: live bytes ---- */

static void curve(const svg_ctx *c, const int64_t *live, int n, const char *color, const char *label)
{
    fprintf(c->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    int buckets = n < MAX_POINTS ? n : MAX_POINTS;
    for (int b = 0; b < buckets; b++) {
        int lo = (int)((long long)b * n / buckets), hi = (int)((long long)(b + 1) * n / buckets);
        int64_t m = 0;
        for (int t = lo; t < hi; t++)
            if (live[t] > m)
                m = live[t];
        double x = MARGIN_L + along(&c->steps, (double)n * (b + 0.5) / buckets, PLOT_W);
        double y = LIVE_TOP + LIVE_H - along(&c->live, (double)m, LIVE_H);
        fprintf(c->f, "%.1f,%.1f ", x, y);
    }
    fprintf(c->f, "\"><title>");
    xml_text(c->f, label);
    fprintf(c->f, "</title></polyline>\n");
}

typedef struct {
    const char *cls, *color, *what;
    int64_t bytes;
    double y, label_y;
} level;

static int cmp_level_y(const void *a, const void *b)
{
    double x = ((const level *)a)->y, y = ((const level *)b)->y;
    return x < y ? -1 : x > y;
}

/* Label centres at least LEVEL_GAP apart, as near their lines as can be,
 * inside the panel: pushed down in order, then back up from the bottom. */
static void spread_labels(level *lv, int n)
{
    qsort(lv, (size_t)n, sizeof *lv, cmp_level_y);
    for (int i = 0; i < n; i++) {
        lv[i].label_y = lv[i].y < LIVE_TOP + 6 ? LIVE_TOP + 6 : lv[i].y;
        if (i > 0 && lv[i].label_y < lv[i - 1].label_y + LEVEL_GAP)
            lv[i].label_y = lv[i - 1].label_y + LEVEL_GAP;
    }
    for (int i = n - 1; i >= 0; i--) {
        double limit = i == n - 1 ? LIVE_TOP + LIVE_H - 6 : lv[i + 1].label_y - LEVEL_GAP;
        if (lv[i].label_y > limit)
            lv[i].label_y = limit;
    }
}

static void draw_level(const svg_ctx *c, const level *l)
{
    char v[32];
    human(l->bytes, v, sizeof v);
    fprintf(c->f,
            "<line class=\"level %s\" data-bytes=\"%lld\" x1=\"%d\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
            "stroke-dasharray=\"6 4\"/>\n",
            l->cls, (long long)l->bytes, MARGIN_L, MARGIN_L + PLOT_W, l->y, l->y, l->color);
    fprintf(c->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"0.8\" points=\"%d,%.2f %d,%.2f\"/>\n",
            l->color, MARGIN_L + PLOT_W, l->y, LABEL_X - 3, l->label_y);
    fprintf(c->f, "<text class=\"level-label\" x=\"%d\" y=\"%.2f\" font-size=\"11\" fill=\"%s\">%s %s</text>\n",
            LABEL_X, l->label_y + 4, l->color, l->what, v);
}

static void live_panel(const svg_ctx *c, int64_t in_peak, int64_t peak)
{
    FILE *f = c->f;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n", MARGIN_L,
            LIVE_TOP, PLOT_W, LIVE_H);
    y_ticks(c, &c->live, LIVE_TOP, LIVE_H, "y-ticks live-y-ticks");
    y_title(c, LIVE_TOP, LIVE_H, "live bytes");
    curve(c, c->plan->live_input, c->plan->n_input_steps, "#999999", "input order");
    curve(c, c->plan->live_planned, c->plan->n_nodes, "#1f5fbf", "planned order");
    level lv[3] = {{"input-peak", "#777777", "input-order peak", in_peak, 0, 0},
                   {"planned-peak", "#1f5fbf", "planned peak", peak, 0, 0},
                   {"lower-bound", "#2a8a2a", "lower bound", c->plan->lower_bound, 0, 0}};
    int n = c->plan->lower_bound >= 0 ? 3 : 2;
    for (int i = 0; i < n; i++)
        lv[i].y = LIVE_TOP + LIVE_H - along(&c->live, (double)lv[i].bytes, LIVE_H);
    spread_labels(lv, n);
    for (int i = 0; i < n; i++)
        draw_level(c, &lv[i]);
    x_ticks(c, LIVE_TOP + LIVE_H, "step");
}

/* ---- panel 2: the arena ---- */

static int cmp_bytes_desc(const void *a, const void *b)
{
    const olla_plan_entry *x = *(const olla_plan_entry *const *)a, *y = *(const olla_plan_entry *const *)b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* A box's rectangle: x, y (top), width, height. */
static void box_of(const svg_ctx *c, const olla_plan_entry *e, double r[4])
{
    r[0] = MARGIN_L + along(&c->steps, e->first_step, PLOT_W);
    r[2] = along(&c->steps, e->last_step + 1 - e->first_step, PLOT_W);
    r[3] = along(&c->arena, (double)e->bytes, ARENA_H);
    r[1] = ARENA_TOP + ARENA_H - along(&c->arena, (double)(e->offset + e->bytes), ARENA_H);
}

static void boxes(const svg_ctx *c)
{
    fprintf(c->f, "<g stroke=\"white\" stroke-width=\"0.3\">\n");
    for (int i = 0; i < c->plan->n_entries; i++) {
        const olla_plan_entry *e = &c->plan->entries[i];
        if (e->bytes <= 0 || e->share != OLLA_BUFFER_OWN)
            continue; /* one box per buffer: sharing tensors lie inside their owner's */
        double r[4];
        char a[32];
        box_of(c, e, r);
        human(e->bytes, a, sizeof a);
        fprintf(c->f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"hsl(%u,55%%,62%%)\"><title>",
                r[0], r[1], r[2] < 0.5 ? 0.5 : r[2], r[3] < 0.5 ? 0.5 : r[3], (unsigned)(i * 137u) % 360u);
        xml_text(c->f, e->name);
        fprintf(c->f, " (%s at offset %lld, steps %d-%d)</title></rect>\n", a, (long long)e->offset, e->first_step,
                e->last_step);
    }
    fprintf(c->f, "</g>\n");
}

/* The names of the largest tensors, each inside its own box and clear of
 * the names already drawn. */
static void name_labels(const svg_ctx *c)
{
    const olla_plan *plan = c->plan;
    const olla_plan_entry **big = malloc(((size_t)plan->n_entries + 1) * sizeof *big);
    if (!big)
        return; /* the hover titles still name every box */
    for (int i = 0; i < plan->n_entries; i++)
        big[i] = &plan->entries[i];
    qsort(big, (size_t)plan->n_entries, sizeof *big, cmp_bytes_desc);
    double placed[NAME_LABELS][4]; /* x0, y0, x1, y1 of the names drawn */
    int n_placed = 0;
    fprintf(c->f, "<g class=\"names\" font-family=\"monospace\" font-size=\"%d\" fill=\"#111\">\n", NAME_FONT);
    for (int i = 0; i < plan->n_entries && n_placed < NAME_LABELS; i++) {
        double r[4];
        if (big[i]->share != OLLA_BUFFER_OWN)
            continue;
        box_of(c, big[i], r);
        if (r[3] < NAME_FONT + 4)
            break; /* the rest are lower still */
        char name[40];
        snprintf(name, sizeof name, "%s", big[i]->name);
        double x0 = r[0] + 2, x1 = x0 + NAME_CHAR_W * (double)strlen(name), y0 = r[1] + 1, y1 = y0 + NAME_FONT + 2;
        if (x1 > r[0] + r[2] - 1)
            continue; /* too narrow for its name; the hover title has it */
        int clash = 0;
        for (int k = 0; k < n_placed && !clash; k++)
            clash = x0 < placed[k][2] && placed[k][0] < x1 && y0 < placed[k][3] && placed[k][1] < y1;
        if (clash)
            continue;
        double *p = placed[n_placed++];
        p[0] = x0, p[1] = y0, p[2] = x1, p[3] = y1;
        fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">", x0, y0 + NAME_FONT - 1);
        xml_text(c->f, name);
        fprintf(c->f, "</text>\n");
    }
    fprintf(c->f, "</g>\n");
    free(big);
}

static void arena_panel(const svg_ctx *c)
{
    char a[32];
    human(c->plan->arena_bytes, a, sizeof a);
    fprintf(c->f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">Arena layout</text>\n", MARGIN_L,
            ARENA_TOP - 12);
    fprintf(c->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n", MARGIN_L,
            ARENA_TOP, PLOT_W, ARENA_H);
    y_ticks(c, &c->arena, ARENA_TOP, ARENA_H, "y-ticks arena-y-ticks");
    y_title(c, ARENA_TOP, ARENA_H, "offset");
    boxes(c);
    double y = ARENA_TOP + ARENA_H - along(&c->arena, (double)c->plan->arena_bytes, ARENA_H);
    fprintf(c->f,
            "<line class=\"level arena-end\" data-bytes=\"%lld\" x1=\"%d\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" "
            "stroke=\"#b03030\" stroke-dasharray=\"6 4\"/>\n"
            "<text class=\"level-label\" x=\"%d\" y=\"%.2f\" font-size=\"11\" fill=\"#b03030\">arena %s</text>\n",
            (long long)c->plan->arena_bytes, MARGIN_L, MARGIN_L + PLOT_W, y, y, LABEL_X, y + 4, a);
    name_labels(c);
    x_ticks(c, ARENA_TOP + ARENA_H, "step (hover a box for its tensor)");
}

/* ---- the document ---- */

static void header(const svg_ctx *c, const char *title, int64_t in_peak, int64_t peak)
{
    char a[32], b[32], d[32];
    human(in_peak, a, sizeof a);
    human(peak, b, sizeof b);
    human(c->plan->arena_bytes, d, sizeof d);
    fprintf(c->f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">",
            SVG_W, SVG_H, SVG_W, SVG_H, MARGIN_L);
    xml_text(c->f, title ? title : "olla-onnx plan");
    fprintf(c->f,
            "</text>\n<text x=\"%d\" y=\"44\" font-size=\"12\">input-order peak %s, planned peak %s, arena %s, "
            "%d steps, %d tensors</text>\n",
            MARGIN_L, a, b, d, c->plan->n_nodes, c->plan->n_entries);
    fprintf(c->f,
            "<g font-size=\"11\"><line x1=\"%d\" x2=\"%d\" y1=\"62\" y2=\"62\" stroke=\"#999\" stroke-width=\"2\"/>"
            "<text x=\"%d\" y=\"66\" fill=\"#666\">input order</text>"
            "<line x1=\"%d\" x2=\"%d\" y1=\"62\" y2=\"62\" stroke=\"#1f5fbf\" stroke-width=\"2\"/>"
            "<text x=\"%d\" y=\"66\" fill=\"#1f5fbf\">planned order</text></g>\n",
            MARGIN_L, MARGIN_L + 20, MARGIN_L + 26, MARGIN_L + 120, MARGIN_L + 140, MARGIN_L + 146);
}

olla_status olla_plan_write_svg(const olla_plan *plan, const char *title, const char *path, olla_error *err)
{
    olla_text_file out; /* written out whole at the end, atomically */
    olla_status st = olla_text_file_open(&out, path, err);
    if (st != OLLA_OK)
        return st;
    int64_t in_peak = 0, peak = 0;
    for (int t = 0; t < plan->n_input_steps; t++)
        if (plan->live_input[t] > in_peak)
            in_peak = plan->live_input[t];
    for (int t = 0; t < plan->n_nodes; t++)
        if (plan->live_planned[t] > peak)
            peak = plan->live_planned[t];
    svg_ctx c;
    c.f = out.f;
    c.plan = plan;
    c.n = plan->n_nodes > plan->n_input_steps ? plan->n_nodes : plan->n_input_steps;
    c.n = c.n > 0 ? c.n : 1;
    c.steps = make_axis(c.n, 1, "");
    c.steps.max = c.n; /* the steps fill the width; ticks up to the last whole step */
    c.live = bytes_axis((double)(in_peak > plan->arena_bytes ? in_peak : plan->arena_bytes));
    c.arena = bytes_axis((double)plan->arena_bytes);
    header(&c, title, in_peak, peak);
    live_panel(&c, in_peak, peak);
    arena_panel(&c);
    fprintf(out.f, "</svg>\n");
    return olla_text_file_write(&out, path, 0, err);
}
