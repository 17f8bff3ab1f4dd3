/* The utilities at the bottom of the house: the string map every stage
 * uses, and the writer that leaves an output whole or not at all. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "olla_test.h"
#include "util/olla_file.h"
#include "util/olla_line.h"
#include "util/olla_strmap.h"

/* A zeroed map is empty and grows on demand; every key keeps its value
 * through the growth, a put replaces, and key() returns the stored key. */
OLLA_TEST(test_strmap_against_a_list)
{
    enum { N = 5000 };
    static char keys[N][16];
    olla_strmap m = {0};
    OLLA_CHECK(!olla_strmap_find(&m, "a", NULL));
    OLLA_CHECK_EQ_I64(olla_strmap_get(&m, "a"), -1);
    OLLA_CHECK(olla_strmap_key(&m, "a") == NULL);
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "t%d", i * 7919 % 100003);
        OLLA_CHECK(olla_strmap_put(&m, keys[i], (size_t)i));
    }
    OLLA_CHECK_EQ_I64((int64_t)m.count, N);
    for (int i = 0; i < N; i++) {
        char probe[16];
        memcpy(probe, keys[i], sizeof probe); /* another pointer, same text */
        size_t v = 0;
        OLLA_CHECK(olla_strmap_find(&m, probe, &v) && v == (size_t)i);
        OLLA_CHECK(olla_strmap_key(&m, probe) == keys[i]);
    }
    OLLA_CHECK(!olla_strmap_find(&m, "t-1", NULL));
    OLLA_CHECK(olla_strmap_put(&m, keys[3], 42));
    OLLA_CHECK_EQ_I64(olla_strmap_get(&m, "t23757"), 42); /* keys[3] */
    OLLA_CHECK_EQ_I64((int64_t)m.count, N);
    olla_strmap_free(&m);
    OLLA_CHECK(!olla_strmap_find(&m, keys[0], NULL));

    olla_strmap sized;
    OLLA_CHECK(olla_strmap_init(&sized, 3));
    OLLA_CHECK(olla_strmap_put(&sized, "x", 7) && olla_strmap_get(&sized, "x") == 7);
    olla_strmap_free(&sized);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void remove_all(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char p[4096];
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

/* Every file written or committed is removed by olla_file_abandon, however
 * many (more than any fixed table) and whether its path was absolute or
 * relative to the folder of the moment. Runs in a child, since the list of
 * committed files is the process's. */
OLLA_TEST(test_abandon_removes_every_output)
{
    char dir[] = "/tmp/olla-util-XXXXXX";
    OLLA_CHECK(mkdtemp(dir) != NULL);
    pid_t pid = fork();
    if (pid == 0) {
        olla_error err = {0};
        char path[4200], tmp[4200];
        int bad = 0;
        for (int i = 0; i < 20; i++) {
            snprintf(path, sizeof path, "%s/out%d", dir, i);
            bad |= olla_write_file_atomic(path, "data", 4, &err) != OLLA_OK;
        }
        bad |= chdir(dir) != 0;
        bad |= olla_write_file_atomic("relative", "x", 1, &err) != OLLA_OK;
        snprintf(tmp, sizeof tmp, "%s/copy.part", dir);
        snprintf(path, sizeof path, "%s/copy", dir);
        FILE *f = fopen(tmp, "w");
        bad |= !f || fputs("y", f) < 0 || fclose(f) != 0;
        bad |= olla_file_commit(tmp, path) != 0;
        bad |= chdir("/") != 0;
        bad |= count_files(dir) != 22;
        olla_file_abandon();
        _exit(bad ? 2 : 0);
    }
    int st = 0;
    OLLA_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    OLLA_CHECK_EQ_I64(count_files(dir), 0);
    remove_all(dir);
}

/* Files forgotten after a complete run stay when a later run is
 * abandoned; that run's own files go. Runs in a child, as above. */
OLLA_TEST(test_forget_keeps_finished_runs)
{
    char dir[] = "/tmp/olla-util-XXXXXX";
    OLLA_CHECK(mkdtemp(dir) != NULL);
    pid_t pid = fork();
    if (pid == 0) {
        olla_error err = {0};
        char path[4200];
        int bad = 0;
        for (int run = 0; run < 3; run++) {
            for (int i = 0; i < 5; i++) {
                snprintf(path, sizeof path, "%s/run%d_%d", dir, run, i);
                bad |= olla_write_file_atomic(path, "data", 4, &err) != OLLA_OK;
            }
            if (run < 2)
                olla_file_forget(); /* runs 0 and 1 completed */
        }
        bad |= count_files(dir) != 15;
        olla_file_abandon(); /* run 2 interrupted */
        _exit(bad ? 2 : 0);
    }
    int st = 0;
    OLLA_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    OLLA_CHECK_EQ_I64(count_files(dir), 10);
    char path[4200];
    snprintf(path, sizeof path, "%s/run1_4", dir);
    OLLA_CHECK(access(path, F_OK) == 0);
    snprintf(path, sizeof path, "%s/run2_0", dir);
    OLLA_CHECK(access(path, F_OK) != 0);
    remove_all(dir);
}

/* The probe of a folder leaves nothing behind and says why it fails. */
OLLA_TEST(test_folder_writable)
{
    char dir[] = "/tmp/olla-util-XXXXXX";
    OLLA_CHECK(mkdtemp(dir) != NULL);
    int why = 0;
    OLLA_CHECK(olla_folder_writable(dir, &why));
    OLLA_CHECK_EQ_I64(count_files(dir), 0);
    OLLA_CHECK(!olla_folder_writable("/nonexistent-olla-dir", &why) && why == ENOENT);
    remove_all(dir);
}

/* A text file built in memory is written whole; when the writer reports a
 * failure, nothing is written (an existing file stays as it was) and the
 * error names the path; a folder that does not exist is an error too. */
OLLA_TEST(test_text_file)
{
    char dir[] = "/tmp/olla-util-XXXXXX";
    OLLA_CHECK(mkdtemp(dir) != NULL);
    char path[64], text[64] = {0};
    snprintf(path, sizeof path, "%s/a.csv", dir);
    olla_error err = {0};
    olla_text_file out;
    OLLA_CHECK_EQ_I64(olla_text_file_open(&out, path, &err), OLLA_OK);
    fprintf(out.f, "id,size\n%d,%d\n", 0, 64);
    OLLA_CHECK_EQ_I64(olla_text_file_write(&out, path, 0, &err), OLLA_OK);
    FILE *f = fopen(path, "r");
    OLLA_CHECK(f != NULL);
    if (f) {
        OLLA_CHECK_EQ_I64((long long)fread(text, 1, sizeof text - 1, f), 13);
        fclose(f);
    }
    OLLA_CHECK(strcmp(text, "id,size\n0,64\n") == 0);
    OLLA_CHECK_EQ_I64(olla_text_file_open(&out, path, &err), OLLA_OK);
    fprintf(out.f, "other\n");
    OLLA_CHECK(olla_text_file_write(&out, path, 1, &err) != OLLA_OK);
    OLLA_CHECK_STR_CONTAINS(err.message, path);
    struct stat sb;
    OLLA_CHECK(stat(path, &sb) == 0 && sb.st_size == 13);
    OLLA_CHECK_EQ_I64(count_files(dir), 1);
    OLLA_CHECK_EQ_I64(olla_text_file_open(&out, "/nonexistent-olla-dir/a.csv", &err), OLLA_OK);
    fprintf(out.f, "x\n");
    OLLA_CHECK(olla_text_file_write(&out, "/nonexistent-olla-dir/a.csv", 0, &err) != OLLA_OK);
    remove_all(dir);
}

static void on_signal(int sig)
{
    (void)sig;
    olla_file_abandon();
    _exit(130);
}

/* A signal at any moment of a writer's life leaves no file behind when its
 * handler abandons the outputs: not the temporary (between its creation
 * and its record), not a committed output (between the rename and its
 * record). The child writes files in a loop; the parent interrupts it after
 * a different delay each time. */
OLLA_TEST(test_signal_at_any_moment_leaves_nothing)
{
    char dir[] = "/tmp/olla-util-XXXXXX";
    OLLA_CHECK(mkdtemp(dir) != NULL);
    int leftovers = 0, interrupted = 0;
    sigset_t intr, old;
    sigemptyset(&intr);
    sigaddset(&intr, SIGINT);
    for (int round = 0; round < 150; round++) {
        /* the child takes SIGINT only once its handler is there */
        sigprocmask(SIG_BLOCK, &intr, &old);
        pid_t pid = fork();
        if (pid == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sigaction(SIGINT, &sa, NULL);
            sigprocmask(SIG_SETMASK, &old, NULL);
            olla_error err = {0};
            char path[4200];
            for (int i = 0; i < 400; i++) {
                snprintf(path, sizeof path, "%s/f%d", dir, i);
                if (olla_write_file_atomic(path, "0123456789", 10, &err) != OLLA_OK)
                    _exit(2);
            }
            olla_file_abandon(); /* not interrupted: clean up the same way */
            _exit(0);
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        struct timespec d = {0, 1000L * (round % 50) * (1 + round / 50)};
        nanosleep(&d, NULL);
        kill(pid, SIGINT);
        int st = 0;
        waitpid(pid, &st, 0);
        interrupted += WIFEXITED(st) && WEXITSTATUS(st) == 130;
        OLLA_CHECK(WIFEXITED(st) && (WEXITSTATUS(st) == 130 || WEXITSTATUS(st) == 0));
        int left = count_files(dir);
        if (left != 0) {
            leftovers++;
            remove_all(dir);
            OLLA_CHECK(mkdir(dir, 0700) == 0);
        }
    }
    OLLA_CHECK_EQ_I64(leftovers, 0);
    OLLA_CHECK(interrupted > 0); /* the signal did land while writing */
    remove_all(dir);
}

/* A line takes whole pieces only: for every buffer size and reserve, the
 * line is exactly the pieces that fit, in order up to the first that does
 * not, and never holds a part of one. */
OLLA_TEST(test_line_takes_whole_pieces)
{
    static const char *const pieces[] = {"olla-onnx: ", "'/encoder/layers.0/Reshape_output_0'", ", ", "x",
                                         " --dim p2o.DynamicDimension.2=N", ""};
    for (size_t size = 1; size < 96; size++)
        for (size_t reserve = 0; reserve < 24; reserve += 7) {
            char buf[96], want[256] = "";
            olla_line l;
            olla_line_init(&l, buf, size);
            int stopped = 0;
            for (size_t k = 0; k < sizeof pieces / sizeof *pieces; k++) {
                int fits = strlen(want) + strlen(pieces[k]) + 1 + reserve <= size;
                int added = olla_line_add(&l, reserve, "%s", pieces[k]);
                OLLA_CHECK(added == (fits && size > 1 && strlen(want) < size - 1));
                if (added && !stopped)
                    strcat(want, pieces[k]);
                stopped |= !added;
                if (stopped)
                    break;
            }
            OLLA_CHECK(strcmp(buf, want) == 0);
            OLLA_CHECK_EQ_I64((long long)l.len, (long long)strlen(buf));
        }
    char b[32];
    olla_human_bytes(9830, b, sizeof b);
    OLLA_CHECK(strcmp(b, "9830 B") == 0);
    olla_human_bytes(39300000, b, sizeof b);
    OLLA_CHECK(strcmp(b, "37.5 MiB") == 0);
}

/* The summary's comparisons (olla_human_change): a percentage where it
 * prints as more than 0.0, the bytes where it would not (a written model
 * 25,600 bytes above a 39.7 GiB input is not "-0.0% less"), "the same" only
 * when equal; and batch's table cells (olla_human_saving): "none" and
 * "<0.1%" where a percentage would print as -0.0 or 0.0; and the headline
 * and batch's total (olla_human_headline), which give the bytes there. */
OLLA_TEST(test_human_change)
{
    typedef void (*text_fn)(int64_t, int64_t, char *, size_t);
    static const struct {
        text_fn fn;
        int64_t before, after;
        const char *want;
    } cases[] = {
        {olla_human_change, 3909632, 1746944, "55.3% less"},
        {olla_human_change, 46772380672LL, 45665110016LL, "2.4% less"},
        {olla_human_change, 42608960512LL, 42608986112LL, "25.0 KiB more"},
        {olla_human_change, 42608986112LL, 42608960512LL, "25.0 KiB less"},
        {olla_human_change, 1000, 1005, "0.5% more"},
        {olla_human_change, 100000, 100040, "40 B more"},
        {olla_human_change, 100000, 100050, "0.1% more"},
        {olla_human_change, 1331200, 1331200, "the same"},
        {olla_human_change, 0, 512, "512 B more"},
        {olla_human_saving, 3909632, 1746944, "55.3%"},
        {olla_human_saving, 42608960512LL, 42608986112LL, "none"},
        {olla_human_saving, 42608986112LL, 42608960512LL, "<0.1%"},
        {olla_human_saving, 1331200, 1331200, "0.0%"},
        {olla_human_saving, 1000, 1012, "-1.2%"},
        {olla_human_saving, 0, 0, "0.0%"},
        {olla_human_headline, 3909632, 1746944, "55.3%"},
        {olla_human_headline, 42608960512LL, 42608986112LL, "none (25.0 KiB more)"},
        {olla_human_headline, 1000, 1012, "none (12 B more)"},
        {olla_human_headline, 42608986112LL, 42608960512LL, "25.0 KiB (under 0.1%)"},
        {olla_human_headline, 1331200, 1331200, "0.0%"},
        {olla_human_headline, 0, 0, "0.0%"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char b[48];
        cases[k].fn(cases[k].before, cases[k].after, b, sizeof b);
        if (strcmp(b, cases[k].want) != 0)
            fprintf(stderr, "case %zu, %lld -> %lld: \"%s\", wanted \"%s\"\n", k, (long long)cases[k].before,
                    (long long)cases[k].after, b, cases[k].want);
        OLLA_CHECK(strcmp(b, cases[k].want) == 0);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_strmap_against_a_list), OLLA_T(test_abandon_removes_every_output),
               OLLA_T(test_forget_keeps_finished_runs), OLLA_T(test_folder_writable), OLLA_T(test_text_file),
               OLLA_T(test_signal_at_any_moment_leaves_nothing), OLLA_T(test_line_takes_whole_pieces), OLLA_T(test_human_change))
