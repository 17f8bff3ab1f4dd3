/* Output paths, checked before any work: a run that would fail to write its
 * report after a ten-minute solve fails in a millisecond instead, and writes
 * nothing. Each output must go to an existing folder we can create files in,
 * must not be a folder itself, must not be the input, and no two outputs may
 * be the same file. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/olla_file.h"

/* The folder part of path ("." when there is none), into buf. */
static void folder_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, n, ".");
    else if (slash == path)
        snprintf(buf, n, "/");
    else
        snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

/* The output's canonical name: the real path of its folder and its own name. */
static int canonical(const char *path, char *out, size_t n)
{
    char dir[PATH_MAX], real[PATH_MAX];
    folder_of(path, dir, sizeof dir);
    if (!realpath(dir, real))
        return 0;
    const char *slash = strrchr(path, '/');
    return snprintf(out, n, "%s/%s", real, slash ? slash + 1 : path) < (int)n;
}

static int check_one(const char *who, const olla_cli_output *o, const char *input)
{
    char dir[PATH_MAX];
    struct stat sb, si;
    const char *base = strrchr(o->path, '/');
    base = base ? base + 1 : o->path;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
        (stat(o->path, &sb) == 0 && S_ISDIR(sb.st_mode))) {
        fprintf(stderr, "%s: %s %s: is a folder; give a file name\n", who, o->what, o->path);
        return 0;
    }
    folder_of(o->path, dir, sizeof dir);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: %s %s: the folder %s does not exist; create it first\n", who, o->what, o->path, dir);
        return 0;
    }
    int why = 0;
    if (!olla_folder_writable(dir, &why)) {
        fprintf(stderr, "%s: %s %s: cannot create files in %s (%s)\n", who, o->what, o->path, dir, strerror(why));
        return 0;
    }
    if (input && stat(o->path, &sb) == 0 && stat(input, &si) == 0 && sb.st_dev == si.st_dev &&
        sb.st_ino == si.st_ino) {
        fprintf(stderr, "%s: %s %s: is the input model; write to another file\n", who, o->what, o->path);
        return 0;
    }
    return 1;
}

int olla_cli_check_outputs(const char *who, const char *input, const olla_cli_output *outs, int n)
{
    for (int i = 0; i < n; i++)
        if (outs[i].path && !check_one(who, &outs[i], input))
            return 0;
    for (int i = 0; i < n; i++) {
        char a[PATH_MAX + 256], b[PATH_MAX + 256];
        if (!outs[i].path || !canonical(outs[i].path, a, sizeof a))
            continue;
        for (int k = i + 1; k < n; k++)
            if (outs[k].path && canonical(outs[k].path, b, sizeof b) && strcmp(a, b) == 0) {
                fprintf(stderr, "%s: %s and %s are both %s; give each output its own file\n", who, outs[i].what,
                        outs[k].what, outs[i].path);
                return 0;
            }
    }
    return 1;
}
