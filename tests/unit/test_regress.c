/* Replays every input saved under tests/regress/<target>/ through the fuzz
 * target that found it (fuzz/fuzz_<target>.c, built here without
 * libFuzzer). A target aborts when the library breaks a promise, so a
 * regression fails this test; so does every bundled model under each of
 * the load target's option sets. Also checks the fixes directly. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OLLA_FUZZ_NO_ENTRY
#include "fuzz/fuzz_load.c"
#include "fuzz/fuzz_place_csv.c"
#include "fuzz/fuzz_shapes.c"
#include "olla_test.h"

/* Calls fn on every file of the source tree's folder sub whose name ends
 * in suffix; returns how many. */
static int each_file(const char *sub, const char *suffix, int (*fn)(const uint8_t *, size_t))
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", OLLA_SOURCE_DIR, sub);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int count = 0;
    size_t ls = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t ln = strlen(de->d_name);
        if (de->d_name[0] == '.' || ln < ls || strcmp(de->d_name + ln - ls, suffix) != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        size_t len = 0;
        uint8_t *buf = olla_test_read_file(path, &len);
        OLLA_CHECK(buf != NULL);
        fprintf(stderr, "%s/%s (%zu bytes)\n", sub, de->d_name, len);
        fn(buf ? buf : (const uint8_t *)"", len);
        free(buf);
        count++;
    }
    closedir(d);
    return count;
}

OLLA_TEST(test_replay_load) { OLLA_CHECK(each_file("tests/regress/load", "", olla_fuzz_load) >= 1); }
OLLA_TEST(test_replay_shapes) { OLLA_CHECK(each_file("tests/regress/shapes", "", olla_fuzz_shapes) >= 1); }
OLLA_TEST(test_replay_place_csv) { OLLA_CHECK(each_file("tests/regress/place_csv", "", olla_fuzz_place_csv) >= 1); }

/* Every bundled model through the load target under each of its option
 * sets (models/cnn_train.onnx with the input order kept is planned in the
 * order ONNX Runtime runs its listing, whose peak is above the listed
 * order's own: the target compares the orders the runtime runs). */
static int load_all_flags(const uint8_t *b, size_t n)
{
    for (unsigned flags = 0; flags < FUZZ_LOAD_FLAGS; flags++)
        fuzz_load_with(b, n, flags);
    return 0;
}
OLLA_TEST(test_bundled_models_every_option) { OLLA_CHECK(each_file("models", ".onnx", load_all_flags) >= 8); }

/* A name with a newline or an escape stays on one line in a message. */
OLLA_TEST(test_message_one_line)
{
    olla_error err = {0};
    olla_error_set(&err, OLLA_ERR_INPUT, "node '%s' (%s) reads '%s'", "a\nb", "Op\x1b[2J", "x\ty\x7f");
    OLLA_CHECK(strcmp(err.message, "node 'a?b' (Op?[2J) reads 'x?y?'") == 0);
}

/* A buffer that is never live needs no room in the arena. */
OLLA_TEST(test_never_live_buffer_validates)
{
    olla_buffer b[2] = {{2, 2, 64, 0}, {1, 3, 32, 0}};
    olla_error err = {0};
    OLLA_CHECK(olla_place_validate(b, 2, 32, 1, &err) == OLLA_OK);
    b[0].upper = 3; /* now live at time 2: it must fit */
    olla_error_clear(&err);
    OLLA_CHECK(olla_place_validate(b, 2, 96, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "overlap");
    olla_error_clear(&err);
    b[0].offset = 32;
    OLLA_CHECK(olla_place_validate(b, 2, 64, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "beyond the arena");
}

OLLA_TEST_MAIN(OLLA_T(test_replay_load), OLLA_T(test_replay_shapes), OLLA_T(test_replay_place_csv),
               OLLA_T(test_bundled_models_every_option),
               OLLA_T(test_message_one_line), OLLA_T(test_never_live_buffer_validates))
