/* The minimalloc CSV reader and writer: malformed rows named by line, a
 * missing file, columns in any order, a failed write that leaves nothing. */
#include <unistd.h>

#include "olla_test.h"
#include "solver/olla_place.h"

static char path_buf[256];

static const char *write_tmp(const char *text)
{
    snprintf(path_buf, sizeof path_buf, "%s/test_place_csv_%d.csv", OLLA_BINARY_DIR, (int)getpid());
    FILE *f = fopen(path_buf, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path_buf;
}

/* Reading must fail with a message containing want (file:line: ...). */
static void expect_error(const char *text, const char *want)
{
    const char *p = write_tmp(text);
    olla_place_table t;
    olla_error err = {0};
    OLLA_CHECK(olla_place_csv_read(p, &t, &err) == OLLA_ERR_INPUT);
    char full[512];
    snprintf(full, sizeof full, "%s%s", want[0] == ':' ? p : "", want);
    OLLA_CHECK_STR_CONTAINS(err.message, full);
    OLLA_CHECK(t.n == 0 && t.bufs == NULL);
    unlink(p);
}

OLLA_TEST(test_malformed_rows)
{
    expect_error("id,lower,upper,size\n0,0,3,2\n1,2,5,x2\n", ":3: size is not a non-negative integer");
    expect_error("id,lower,upper,size\n0,0,3,2\n\n1,2,5,2\n2,1,4,2.5\n",
                 ":5: size is not a non-negative integer");
    expect_error("id,lower,upper,size\n0,-1,3,2\n", ":2: lower -1 is negative");
    expect_error("id,lower,upper,size\n0,5,3,2\n", ":2: inverted interval");
    expect_error("id,lower,upper,size\na,0,3,2\nb,0,3,2\na,1,2,1\n",
                 ":4: duplicate id \"a\" (first on line 2)");
    expect_error("id,lower,upper,size\n0,0,3\n", ":2: 3 fields where the header has 4");
    expect_error("id,lower,upper,size\n0,0,3,99999999999999999999\n", ":2: size 99999999999999999999 overflows");
    expect_error("id,lower,upper,size\n0,0,,2\n", ":2: upper is not a non-negative integer");
    expect_error("id,lower,size\n0,0,2\n", ":1: the header has no \"upper\" column");
    expect_error("id,lower,upper,size,lower\n", ":1: column \"lower\" appears twice");
    expect_error("", "empty file");
    expect_error("id,lower,upper,size\n,0,3,2\n", ":2: empty id");
}

OLLA_TEST(test_missing_file)
{
    olla_place_table t;
    olla_error err = {0};
    OLLA_CHECK(olla_place_csv_read("/nonexistent/dir/x.csv", &t, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "/nonexistent/dir/x.csv: cannot open");
}

/* Columns in any order, extra columns and CRLF are accepted; writing adds an
 * offset column and keeps the extra ones; an old offset column is replaced. */
OLLA_TEST(test_round_trip)
{
    const char *p = write_tmp("size,upper,note,id,lower,offset\r\n4,3,first,x,0,99\r\n2,5,second,y,2,98\r\n");
    olla_place_table t;
    olla_error err = {0};
    OLLA_CHECK(olla_place_csv_read(p, &t, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(t.n, 2);
    if (t.n != 2) {
        olla_place_table_free(&t);
        return;
    }
    OLLA_CHECK(strcmp(t.ids[1], "y") == 0);
    OLLA_CHECK_EQ_I64(t.bufs[0].size, 4);
    OLLA_CHECK_EQ_I64(t.bufs[0].upper, 3);
    OLLA_CHECK_EQ_I64(t.bufs[1].lower, 2);
    t.bufs[0].offset = 0;
    t.bufs[1].offset = 4;
    OLLA_CHECK(olla_place_csv_write(p, &t, &err) == OLLA_OK);
    olla_place_table_free(&t);
    FILE *f = fopen(p, "r");
    char buf[512] = {0};
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    OLLA_CHECK(got > 0);
    OLLA_CHECK(strcmp(buf, "size,upper,note,id,lower,offset\n4,3,first,x,0,0\n2,5,second,y,2,4\n") == 0);
    /* reading the output back gives the same buffers */
    OLLA_CHECK(olla_place_csv_read(p, &t, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(t.n, 2);
    olla_place_table_free(&t);
    unlink(p);
}

/* A failed write leaves nothing behind. */
OLLA_TEST(test_write_failure)
{
    olla_place_table t = {0};
    olla_error err = {0};
    OLLA_CHECK(olla_place_csv_write("/nonexistent/dir/out.csv", &t, &err) == OLLA_ERR_INTERNAL);
    OLLA_CHECK_STR_CONTAINS(err.message, "/nonexistent/dir/out.csv");
}

OLLA_TEST_MAIN(OLLA_T(test_malformed_rows), OLLA_T(test_missing_file), OLLA_T(test_round_trip),
               OLLA_T(test_write_failure))
