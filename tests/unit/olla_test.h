/* olla-onnx: a minimal unit-test harness. Each test file defines tests with
 * OLLA_TEST(name) and lists them in OLLA_TEST_MAIN(...).
 *
 * A test whose data is missing (the shared corpus) calls olla_test_skip and
 * returns: the program then exits 77, which ctest reports as skipped
 * (SKIP_RETURN_CODE), unless another check failed (exit 1). A test never
 * passes without having checked anything. */
#ifndef OLLA_TEST_H
#define OLLA_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int olla_test_failures;
static int olla_test_skips;

/* Marks the running test skipped and says why; the caller returns. */
static inline void olla_test_skip(const char *why)
{
    printf("skipped: %s\n", why);
    olla_test_skips++;
}

#define OLLA_CHECK(cond)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            olla_test_failures++;                                                 \
        }                                                                         \
    } while (0)

#define OLLA_CHECK_EQ_I64(a, b)                                                              \
    do {                                                                                     \
        int64_t va_ = (int64_t)(a), vb_ = (int64_t)(b);                                      \
        if (va_ != vb_) {                                                                    \
            fprintf(stderr, "%s:%d: %s == %s failed: %" PRId64 " != %" PRId64 "\n", __FILE__, \
                    __LINE__, #a, #b, va_, vb_);                                             \
            olla_test_failures++;                                                            \
        }                                                                                    \
    } while (0)

#define OLLA_CHECK_STR_CONTAINS(hay, needle)                                                 \
    do {                                                                                     \
        const char *h_ = (hay), *n_ = (needle);                                              \
        if (!h_ || !strstr(h_, n_)) {                                                        \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,  \
                    h_ ? h_ : "(null)", n_);                                                 \
            olla_test_failures++;                                                            \
        }                                                                                    \
    } while (0)

#define OLLA_TEST(name) static void name(void)

/* The bytes of the file at path (malloc'd, at least one byte so that an
 * empty file is not NULL; *len of them), or NULL when it cannot be read. */
static inline unsigned char *olla_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (*len == cap) {
            size_t grown = cap ? 2 * cap : 4096;
            unsigned char *nb = realloc(buf, grown);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap = grown;
        }
        size_t k = fread(buf + *len, 1, cap - *len, f);
        if (k == 0)
            break;
        *len += k;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* 1 when OLLA_TEST_QUICK is set (and not "0"): the sanitizer build sets it
 * (tests/CMakeLists.txt), and tests that generate many cases then check
 * fewer of them; the normal build runs them all. */
static inline int olla_test_quick(void)
{
    const char *q = getenv("OLLA_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

typedef void (*olla_test_fn)(void);
typedef struct {
    const char *name;
    olla_test_fn fn;
} olla_test_case;

#define OLLA_T(fn) {#fn, fn}

static inline int olla_test_run(const olla_test_case *cases, int n)
{
    int passed = 0, skipped = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        int before = olla_test_failures, skips_before = olla_test_skips;
        cases[i].fn();
        if (olla_test_failures != before) {
            failed++;
            fprintf(stderr, "FAIL %s\n", cases[i].name);
        } else if (olla_test_skips != skips_before) {
            skipped++;
            printf("SKIP %s\n", cases[i].name);
        } else {
            passed++;
        }
    }
    if (skipped)
        printf("%d passed, %d skipped, %d failed\n", passed, skipped, failed);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : skipped ? 77 : 0;
}

#define OLLA_TEST_MAIN(...)                                                          \
    int main(void)                                                                   \
    {                                                                                \
        static const olla_test_case cases_[] = {__VA_ARGS__};                        \
        return olla_test_run(cases_, (int)(sizeof cases_ / sizeof cases_[0]));       \
    }

#endif
