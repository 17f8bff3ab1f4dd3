/* olla-onnx: a picture of the plan, as SVG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla_plan.h"
#include "util/olla_file.h"

#define SVG_W 1200
#define MARGIN_L 90
#define MARGIN_R 20
#define PLOT_W (SVG_W - MARGIN_L - MARGIN_R)
#define LIVE_TOP 50
#define LIVE_H 260
#define ARENA_TOP (LIVE_TOP + LIVE_H + 80)
#define ARENA_H 520
#define SVG_H (ARENA_TOP + ARENA_H + 60)
#define MAX_POINTS 1500 /* long orders are drawn by the maximum of each bucket */
#define LABELS 12

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

static void curve(FILE *f, const int64_t *live, int n, double ymax, const char *color, const char *label)
{
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    int buckets = n < MAX_POINTS ? n : MAX_POINTS;
    for (int b = 0; b < buckets; b++) {
        int lo = (int)((long long)b * n / buckets), hi = (int)((long long)(b + 1) * n / buckets);
        int64_t m = 0;
        for (int t = lo; t < hi; t++)
            if (live[t] > m)
                m = live[t];
        double x = MARGIN_L + PLOT_W * (b + 0.5) / buckets;
        double y = LIVE_TOP + LIVE_H - LIVE_H * (double)m / ymax;
        fprintf(f, "%.1f,%.1f ", x, y);
    }
    fprintf(f, "\"><title>");
    xml_text(f, label);
    fprintf(f, "</title></polyline>\n");
}

/* A dashed level with its label at the right end, or the left (at_left). */
static void hline(FILE *f, double y, const char *color, const char *text, int at_left)
{
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"6 4\"/>\n", MARGIN_L,
            MARGIN_L + PLOT_W, y, y, color);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" fill=\"%s\" text-anchor=\"%s\">",
            at_left ? MARGIN_L + PLOT_W / 3 : MARGIN_L + PLOT_W - 4, y - 3, color, at_left ? "start" : "end");
    xml_text(f, text);
    fprintf(f, "</text>\n");
}

static int cmp_bytes_desc(const void *a, const void *b)
{
    const olla_plan_entry *x = *(const olla_plan_entry *const *)a, *y = *(const olla_plan_entry *const *)b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

olla_status olla_plan_write_svg(const olla_plan *plan, const char *title, const char *path, olla_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len); /* written out whole at the end, atomically */
    if (!f)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path);
    int n = plan->n_nodes > 0 ? plan->n_nodes : 1;
    int64_t in_peak = 0, peak = 0;
    for (int t = 0; t < plan->n_nodes; t++) {
        if (plan->live_input[t] > in_peak)
            in_peak = plan->live_input[t];
        if (plan->live_planned[t] > peak)
            peak = plan->live_planned[t];
    }
    double ymax = (double)(in_peak > plan->arena_bytes ? in_peak : plan->arena_bytes);
    if (ymax <= 0)
        ymax = 1;
    char a[32], b[32], c[32];
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", MARGIN_L);
    xml_text(f, title ? title : "olla-onnx plan");
    human(in_peak, a, sizeof a);
    human(peak, b, sizeof b);
    human(plan->arena_bytes, c, sizeof c);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"42\" font-size=\"12\">input-order peak %s, planned peak %s, arena %s, "
               "%d steps, %d tensors</text>\n",
            MARGIN_L, a, b, c, plan->n_nodes, plan->n_entries);
    /* panel 1: live bytes over the steps */
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n", MARGIN_L,
            LIVE_TOP, PLOT_W, LIVE_H);
    fprintf(f, "<text x=\"20\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 20 %d)\" text-anchor=\"middle\">live "
               "bytes</text>\n",
            LIVE_TOP + LIVE_H / 2, LIVE_TOP + LIVE_H / 2);
    curve(f, plan->live_input, plan->n_nodes, ymax, "#999999", "input order");
    curve(f, plan->live_planned, plan->n_nodes, ymax, "#1f5fbf", "planned order");
    char lab[96];
    snprintf(lab, sizeof lab, "input-order peak %s", a);
    hline(f, LIVE_TOP + LIVE_H - LIVE_H * (double)in_peak / ymax, "#777777", lab, 1);
    snprintf(lab, sizeof lab, "planned peak %s", b);
    hline(f, LIVE_TOP + LIVE_H - LIVE_H * (double)peak / ymax, "#1f5fbf", lab, 0);
    if (plan->lower_bound >= 0) {
        human(plan->lower_bound, c, sizeof c);
        snprintf(lab, sizeof lab, "lower bound %s", c);
        fprintf(f, "<g transform=\"translate(0,14)\">");
        hline(f, LIVE_TOP + LIVE_H - LIVE_H * (double)plan->lower_bound / ymax, "#2a8a2a", lab, 0);
        fprintf(f, "</g>\n");
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#999\">grey: input order</text>\n", MARGIN_L + 4,
            LIVE_TOP + 14);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#1f5fbf\">blue: planned order</text>\n",
            MARGIN_L + 4, LIVE_TOP + 28);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">step</text>\n",
            MARGIN_L + PLOT_W / 2, LIVE_TOP + LIVE_H + 18);
    /* panel 2: the arena, steps across, offsets up */
    double amax = plan->arena_bytes > 0 ? (double)plan->arena_bytes : 1;
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">Arena layout</text>\n", MARGIN_L,
            ARENA_TOP - 10);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n", MARGIN_L,
            ARENA_TOP, PLOT_W, ARENA_H);
    fprintf(f, "<text x=\"20\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 20 %d)\" text-anchor=\"middle\">"
               "offset</text>\n",
            ARENA_TOP + ARENA_H / 2, ARENA_TOP + ARENA_H / 2);
    fprintf(f, "<g stroke=\"white\" stroke-width=\"0.3\">\n");
    for (int i = 0; i < plan->n_entries; i++) {
        const olla_plan_entry *e = &plan->entries[i];
        if (e->bytes <= 0 || e->share != OLLA_BUFFER_OWN)
            continue; /* one box per buffer: sharing tensors lie inside their owner's */
        double x = MARGIN_L + PLOT_W * (double)e->first_step / n;
        double w = PLOT_W * (double)(e->last_step + 1 - e->first_step) / n;
        double h = ARENA_H * (double)e->bytes / amax;
        double y = ARENA_TOP + ARENA_H - ARENA_H * (double)(e->offset + e->bytes) / amax;
        unsigned hue = (unsigned)(i * 137u) % 360u;
        human(e->bytes, a, sizeof a);
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"hsl(%u,55%%,62%%)\"><title>", x,
                y, w < 0.5 ? 0.5 : w, h < 0.5 ? 0.5 : h, hue);
        xml_text(f, e->name);
        fprintf(f, " (%s at offset %lld, steps %d-%d)</title></rect>\n", a, (long long)e->offset, e->first_step,
                e->last_step);
    }
    fprintf(f, "</g>\n");
    /* label the largest tensors, clipped to the panel */
    fprintf(f, "<clipPath id=\"arena\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath>\n"
               "<g clip-path=\"url(#arena)\">\n",
            MARGIN_L, ARENA_TOP, PLOT_W, ARENA_H);
    const olla_plan_entry **big = malloc(((size_t)plan->n_entries + 1) * sizeof *big);
    if (big) {
        for (int i = 0; i < plan->n_entries; i++)
            big[i] = &plan->entries[i];
        qsort(big, (size_t)plan->n_entries, sizeof *big, cmp_bytes_desc);
        double placed[LABELS][4]; /* x0, y0, x1, y1 of the labels drawn */
        int n_placed = 0;
        for (int i = 0; i < plan->n_entries && n_placed < LABELS; i++) {
            const olla_plan_entry *e = big[i];
            if (e->share != OLLA_BUFFER_OWN)
                continue;
            double h = ARENA_H * (double)e->bytes / amax;
            double w = PLOT_W * (double)(e->last_step + 1 - e->first_step) / n;
            if (h < 10)
                break;
            if (w < 50) /* too narrow to carry a name; the hover title has it */
                continue;
            double x = MARGIN_L + PLOT_W * (double)e->first_step / n + 2;
            double y = ARENA_TOP + ARENA_H - ARENA_H * (double)(e->offset + e->bytes) / amax + 11;
            char name[40];
            snprintf(name, sizeof name, "%s", e->name);
            double x1 = x + 6.0 * (double)strlen(name), y0 = y - 10;
            int clash = 0;
            for (int k = 0; k < n_placed && !clash; k++)
                clash = x < placed[k][2] && placed[k][0] < x1 && y0 < placed[k][3] && placed[k][1] < y;
            if (clash)
                continue;
            placed[n_placed][0] = x;
            placed[n_placed][1] = y0;
            placed[n_placed][2] = x1;
            placed[n_placed][3] = y;
            n_placed++;
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#111\">", x, y);
            xml_text(f, name);
            fprintf(f, "</text>\n");
        }
        free(big);
    }
    fprintf(f, "</g>\n");
    human(plan->arena_bytes, a, sizeof a);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>\n", MARGIN_L - 4,
            ARENA_TOP + 10, a);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0</text>\n", MARGIN_L - 4,
            ARENA_TOP + ARENA_H);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">step (hover a box for its "
               "tensor)</text>\n</svg>\n",
            MARGIN_L + PLOT_W / 2, ARENA_TOP + ARENA_H + 20);
    olla_status st = OLLA_OK;
    if (ferror(f) | (fclose(f) != 0))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path);
    else
        st = olla_write_file_atomic(path, buf, len, err);
    free(buf);
    return st;
}
