/* olla-onnx: the curve of peak memory against extra compute as CSV and as
 * an SVG plot (olla_plan.h, olla_tradeoff). */
#include <stdio.h>
#include <string.h>

#include "olla_plan.h"
#include "util/olla_file.h"

olla_status olla_tradeoff_write_csv(const olla_tradeoff *t, const char *path, olla_error *err)
{
    olla_text_file out;
    olla_status st = olla_text_file_open(&out, path, err);
    if (st != OLLA_OK)
        return st;
    fprintf(out.f, "limit_bytes,peak_bytes,extra_flops,extra_fraction,copies,recomputed_tensors,status\n");
    for (int i = 0; i < t->n_points; i++) {
        const olla_tradeoff_point *p = &t->points[i];
        fprintf(out.f, "%lld,%lld,%lld,%.6f,%d,%d,%s\n", (long long)p->limit_bytes, (long long)p->peak_bytes,
                (long long)p->extra_flops, p->extra_fraction, p->copies, p->recomputed_tensors,
                p->copies == 0 ? "none" : p->optimal ? "optimal" : "feasible");
    }
    return olla_text_file_write(&out, path, 0, err);
}

/* Plot geometry. */
enum { W = 720, H = 440, LEFT = 90, RIGHT = 30, TOP = 50, BOTTOM = 60, TICKS = 5 };

static void human(double b, char *buf, size_t n)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, n, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, n, "%.0f B", b);
}

static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

olla_status olla_tradeoff_write_svg(const olla_tradeoff *t, const char *title, const char *path, olla_error *err)
{
    olla_text_file out;
    olla_status st = olla_text_file_open(&out, path, err);
    if (st != OLLA_OK)
        return st;
    FILE *f = out.f;
    double xmax = 0, ylo = (double)t->peak_bound_bytes, yhi = (double)t->no_limit_peak_bytes;
    for (int i = 0; i < t->n_points; i++) {
        if (100.0 * t->points[i].extra_fraction > xmax)
            xmax = 100.0 * t->points[i].extra_fraction;
        if ((double)t->points[i].peak_bytes < ylo)
            ylo = (double)t->points[i].peak_bytes;
    }
    xmax = xmax > 0 ? xmax * 1.1 : 1.0;
    ylo = ylo > 0 ? ylo * 0.95 : 0;
    yhi = yhi > ylo ? yhi * 1.02 : ylo + 1;
    int pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
#define X(v) (LEFT + (v) / xmax * pw)
#define Y(v) (TOP + ph - ((v) - ylo) / (yhi - ylo) * ph)
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"14\">", LEFT);
    xml_text(f, title);
    fprintf(f, ": peak memory against extra compute</text>\n");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n", LEFT, TOP,
            pw, ph);
    for (int k = 0; k <= TICKS; k++) {
        double xv = xmax * k / TICKS, yv = ylo + (yhi - ylo) * k / TICKS;
        char b[32];
        human(yv, b, sizeof b);
        fprintf(f, "<text class=\"x-tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.1f%%</text>\n", X(xv),
                TOP + ph + 18, xv);
        fprintf(f, "<text class=\"y-tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", LEFT - 6,
                Y(yv) + 4, b);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">extra compute (estimated FLOPs, %% of one step)</text>\n",
            LEFT + pw / 2, H - 16);
    fprintf(f, "<text x=\"18\" y=\"%d\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\">peak memory</text>\n",
            TOP + ph / 2, TOP + ph / 2);
    if (t->peak_bound_bytes > ylo) {
        char b[32];
        human((double)t->peak_bound_bytes, b, sizeof b);
        fprintf(f, "<line class=\"bound\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#2a8a2a\" "
                   "stroke-dasharray=\"6 4\"/>\n",
                LEFT, LEFT + pw, Y((double)t->peak_bound_bytes), Y((double)t->peak_bound_bytes));
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" fill=\"#2a8a2a\" text-anchor=\"end\">no plan below %s</text>\n",
                LEFT + pw - 4, Y((double)t->peak_bound_bytes) - 4, b);
    }
    fprintf(f, "<polyline class=\"curve\" fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.5\" points=\"");
    for (int i = 0; i < t->n_points; i++)
        fprintf(f, "%.1f,%.1f ", X(100.0 * t->points[i].extra_fraction), Y((double)t->points[i].peak_bytes));
    fprintf(f, "\"/>\n");
    for (int i = 0; i < t->n_points; i++) {
        const olla_tradeoff_point *p = &t->points[i];
        char b[32];
        human((double)p->peak_bytes, b, sizeof b);
        fprintf(f, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>peak %s, +%.2f%% "
                   "compute, %d copies%s</title></circle>\n",
                X(100.0 * p->extra_fraction), Y((double)p->peak_bytes), p->optimal ? "#1f5fbf" : "#7fa6e0", b,
                100.0 * p->extra_fraction, p->copies, p->optimal ? " (optimal)" : "");
    }
#undef X
#undef Y
    fprintf(f, "</svg>\n");
    return olla_text_file_write(&out, path, 0, err);
}
