/*
 * alloc_counter.c: how many bytes of large heap blocks a process holds at its
 * peak between two marks, measured inside the process.
 *
 * Loaded with LD_PRELOAD (Linux, glibc), it wraps malloc, calloc, realloc,
 * reallocarray, free, posix_memalign, aligned_alloc, memalign, valloc and
 * pvalloc. Every live block of ALLOC_COUNTER_TRACK_MIN bytes or more is kept
 * in a hash table (address -> requested size, and the window it was allocated
 * in), so the counter knows at every moment the sum of the requested sizes of
 * the live large blocks. Smaller blocks are never counted: ONNX Runtime's
 * tensors of interest are large, and the many small blocks of the JavaScript
 * engine and of ORT's bookkeeping would only add noise.
 *
 * The window is opened and closed by the program under test with allocations
 * of two sizes that nothing else uses (the marks are not counted):
 *   ALLOC_COUNTER_MARK_START = 1000003 bytes: opens a window;
 *   ALLOC_COUNTER_MARK_STOP  = 1000033 bytes: closes it and writes the result;
 *   ALLOC_COUNTER_MARK_CHECKPOINT = 1000013 bytes: notes the caller's peak so
 *               far in the open window (checkpoint_peak_bytes of the result,
 *               0 without a checkpoint; the last one counts);
 *   ALLOC_COUNTER_MARK_PAUSE = 1000037 bytes, ALLOC_COUNTER_MARK_RESUME =
 *               1000039 bytes: blocks allocated between them are not part of
 *               the window (blocks of the window freed meanwhile still
 *               leave it): for work of the program itself between the runs
 *               it measures, such as a garbage collection, whose own blocks
 *               would otherwise count.
 * (Both odd primes; in JavaScript `new ArrayBuffer(1000003)` makes one such
 * allocation.) A window belongs to the thread that opens it, its caller.
 * Within a window the counter tracks
 *   caller_peak_bytes: the peak of the sum of the blocks the caller allocated
 *               inside the window and that are still live. Blocks allocated
 *               before the window are not part of it, so a block freed by
 *               another thread during the window cannot lower the figure;
 *               blocks other threads allocate cannot raise it (ONNX Runtime
 *               allocates on the thread that calls run, while the JavaScript
 *               engine's threads allocate at any time);
 *   all_threads_peak_bytes: the same for the blocks any thread allocated;
 *   peak_live:  the peak of the sum of all live large blocks;
 *   live_at_start / live_at_stop: that sum when the window opens and closes;
 *   caller_blocks / all_threads_blocks: the large blocks allocated in it.
 * At the stop mark one JSON line with these numbers (bytes) is written,
 * replacing the file named by the environment variable ALLOC_COUNTER_OUT (to
 * stderr when it is unset). A failure of the counter itself (its table could
 * not grow) is reported as "error" in that line, never silently.
 *
 * Start-up: the real functions are found with dlsym(RTLD_NEXT, ...), which may
 * itself allocate; calls made while they are being looked up are served from a
 * static buffer (boot_arena) whose blocks are never freed.
 *
 * Invariants: a block is entered in the table after the real allocator returns
 * it and removed before the real free, so another thread can never be handed
 * the same address while the table still holds it. All counters are changed
 * only under table_lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALLOC_COUNTER_TRACK_MIN 4096u
#define ALLOC_COUNTER_MARK_START 1000003u
#define ALLOC_COUNTER_MARK_STOP 1000033u
#define ALLOC_COUNTER_MARK_CHECKPOINT 1000013u
#define ALLOC_COUNTER_MARK_PAUSE 1000037u
#define ALLOC_COUNTER_MARK_RESUME 1000039u

#define EXPORT __attribute__((visibility("default")))

/* ---- real functions ---- */

typedef struct real_functions {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable_size)(void *);
} real_functions;

static real_functions real;
/* 0: not looked up, 1: being looked up (serve from boot_arena), 2: ready */
static atomic_int real_state;

/* Bump allocator for the calls dlsym makes before the real functions are known. */
static _Alignas(64) unsigned char boot_arena[64 * 1024];
static atomic_size_t boot_used;

static int in_boot_arena(const void *p)
{
    const unsigned char *c = p;
    return c >= boot_arena && c < boot_arena + sizeof boot_arena;
}

static void *boot_alloc(size_t align, size_t size)
{
    if (align < 16)
        align = 16;
    size_t old = atomic_load(&boot_used), start, end;
    do {
        start = (old + align - 1) & ~(align - 1);
        end = start + size;
        if (end > sizeof boot_arena || end < start)
            return NULL;
    } while (!atomic_compare_exchange_weak(&boot_used, &old, end));
    return boot_arena + start; /* static storage: already zero */
}

static void look_up_real(void)
{
    real.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real.posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real.aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    real.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    real.valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
    real.pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
    real.usable_size = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
}

/* 1 when the real functions can be called, 0 while they are being looked up. */
static int real_ready(void)
{
    int state = atomic_load_explicit(&real_state, memory_order_acquire);
    if (state == 2)
        return 1;
    int expected = 0;
    if (state == 0 && atomic_compare_exchange_strong(&real_state, &expected, 1)) {
        look_up_real();
        if (!real.malloc || !real.calloc || !real.realloc || !real.free || !real.posix_memalign ||
            !real.memalign || !real.usable_size) {
            static const char msg[] = "alloc_counter: dlsym(RTLD_NEXT) did not find the C allocator\n";
            (void)!write(2, msg, sizeof msg - 1);
            _exit(127);
        }
        atomic_store_explicit(&real_state, 2, memory_order_release);
        return 1;
    }
    return 0;
}


/* ---- block table ---- */

/* Open addressing with linear probing; key 0 is an empty slot. */
typedef struct block_entry {
    uintptr_t address;
    size_t size;     /* requested bytes */
    uint64_t window; /* window number when allocated inside one, else 0 */
    int by_caller;   /* allocated by the thread that opened that window */
} block_entry;

/* Bytes of the live blocks allocated in the open window (by any thread, or by
 * the thread that opened it), their peak and how many were allocated. */
typedef struct window_sum {
    size_t live;
    size_t peak;
    size_t blocks;
} window_sum;

typedef struct counter_state {
    block_entry *slots; /* capacity entries, mmap'ed */
    size_t capacity;    /* a power of two, 0 before the first block */
    size_t count;
    size_t live;        /* bytes of all live tracked blocks */
    uint64_t window;    /* number of the open window, 0 when none is open */
    int paused;         /* between a pause and a resume mark: new blocks are outside the window */
    uint64_t windows;   /* windows opened so far */
    pthread_t caller;   /* the thread that opened the window */
    window_sum any;     /* blocks allocated in the window by any thread */
    window_sum own;     /* ... by the thread that opened it */
    size_t live_peak;
    size_t live_at_start;
    size_t checkpoint_peak; /* own.peak at the last checkpoint of the window */
    int table_failed; /* a block could not be entered: the figures are low */
} counter_state;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static counter_state state;

static size_t slot_of(uintptr_t address, size_t capacity)
{
    uint64_t h = (uint64_t)address * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (capacity - 1);
}

static void put_entry(block_entry *slots, size_t capacity, block_entry e)
{
    size_t i = slot_of(e.address, capacity);
    while (slots[i].address)
        i = (i + 1) & (capacity - 1);
    slots[i] = e;
}

static int grow_table(void)
{
    size_t capacity = state.capacity ? state.capacity * 2 : 1u << 12;
    block_entry *slots = mmap(NULL, capacity * sizeof *slots, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slots == MAP_FAILED)
        return 0;
    for (size_t i = 0; i < state.capacity; i++)
        if (state.slots[i].address)
            put_entry(slots, capacity, state.slots[i]);
    if (state.slots)
        munmap(state.slots, state.capacity * sizeof *state.slots);
    state.slots = slots;
    state.capacity = capacity;
    return 1;
}

/* Index of address in the table, or (size_t)-1. */
static size_t find_slot(uintptr_t address)
{
    if (!state.capacity)
        return (size_t)-1;
    size_t i = slot_of(address, state.capacity);
    while (state.slots[i].address) {
        if (state.slots[i].address == address)
            return i;
        i = (i + 1) & (state.capacity - 1);
    }
    return (size_t)-1;
}

/* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
static void remove_slot(size_t hole)
{
    size_t mask = state.capacity - 1, i = hole;
    for (;;) {
        i = (i + 1) & mask;
        if (!state.slots[i].address)
            break;
        size_t home = slot_of(state.slots[i].address, state.capacity);
        int movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
        if (movable) {
            state.slots[hole] = state.slots[i];
            hole = i;
        }
    }
    state.slots[hole].address = 0;
    state.count--;
}

/* A fork while another thread holds the lock would leave the child's copy
 * locked forever: hold it across the fork. */
static void lock_for_fork(void)
{
    pthread_mutex_lock(&table_lock);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&table_lock);
}

__attribute__((constructor)) static void alloc_counter_init(void)
{
    (void)real_ready();
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

/* ---- counting ---- */

static void add_to_sum(window_sum *sum, size_t size)
{
    sum->live += size;
    sum->blocks++;
    if (sum->live > sum->peak)
        sum->peak = sum->live;
}

static void track_block(void *p, size_t size)
{
    pthread_mutex_lock(&table_lock);
    if ((state.count + 1) * 2 > state.capacity && !grow_table()) {
        state.table_failed = 1;
    } else {
        uint64_t window = state.paused ? 0 : state.window;
        int by_caller = window && pthread_equal(pthread_self(), state.caller);
        block_entry e = {(uintptr_t)p, size, window, by_caller};
        put_entry(state.slots, state.capacity, e);
        state.count++;
        state.live += size;
        if (state.live > state.live_peak)
            state.live_peak = state.live;
        if (window)
            add_to_sum(&state.any, size);
        if (by_caller)
            add_to_sum(&state.own, size);
    }
    pthread_mutex_unlock(&table_lock);
}

/* Removes p from the table if it is there; returns its size (0 when untracked). */
static size_t untrack_block(void *p)
{
    size_t size = 0;
    pthread_mutex_lock(&table_lock);
    size_t i = find_slot((uintptr_t)p);
    if (i != (size_t)-1) {
        block_entry e = state.slots[i];
        size = e.size;
        state.live -= size;
        if (state.window && e.window == state.window) {
            state.any.live -= size;
            if (e.by_caller)
                state.own.live -= size;
        }
        remove_slot(i);
    }
    pthread_mutex_unlock(&table_lock);
    return size;
}

static void open_window(void)
{
    pthread_mutex_lock(&table_lock);
    state.window = ++state.windows;
    state.caller = pthread_self();
    state.any = state.own = (window_sum){0, 0, 0};
    state.live_at_start = state.live_peak = state.live;
    state.checkpoint_peak = 0;
    state.paused = 0;
    pthread_mutex_unlock(&table_lock);
}

static void checkpoint(void)
{
    pthread_mutex_lock(&table_lock);
    if (state.window)
        state.checkpoint_peak = state.own.peak;
    pthread_mutex_unlock(&table_lock);
}

/* Appends the decimal digits of v to buf at *len. */
static void put_number(char *buf, size_t *len, size_t v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        buf[(*len)++] = digits[--n];
}

static void put_text(char *buf, size_t *len, const char *s)
{
    while (*s)
        buf[(*len)++] = *s++;
}

static void write_result(const counter_state *s, size_t live_at_stop)
{
    char line[256];
    size_t len = 0;
    put_text(line, &len, "{\"caller_peak_bytes\":");
    put_number(line, &len, s->own.peak);
    put_text(line, &len, ",\"all_threads_peak_bytes\":");
    put_number(line, &len, s->any.peak);
    put_text(line, &len, ",\"peak_live\":");
    put_number(line, &len, s->live_peak);
    put_text(line, &len, ",\"live_at_start\":");
    put_number(line, &len, s->live_at_start);
    put_text(line, &len, ",\"live_at_stop\":");
    put_number(line, &len, live_at_stop);
    put_text(line, &len, ",\"caller_blocks\":");
    put_number(line, &len, s->own.blocks);
    put_text(line, &len, ",\"all_threads_blocks\":");
    put_number(line, &len, s->any.blocks);
    put_text(line, &len, ",\"checkpoint_peak_bytes\":");
    put_number(line, &len, s->checkpoint_peak);
    if (s->table_failed)
        put_text(line, &len, ",\"error\":\"the block table could not grow (mmap failed)\"");
    put_text(line, &len, "}\n");

    const char *path = getenv("ALLOC_COUNTER_OUT");
    int fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 2;
    if (fd < 0)
        return;
    (void)!write(fd, line, len);
    if (fd != 2)
        close(fd);
}

static void set_paused(int paused)
{
    pthread_mutex_lock(&table_lock);
    state.paused = paused;
    pthread_mutex_unlock(&table_lock);
}

static void close_window(void)
{
    pthread_mutex_lock(&table_lock);
    counter_state copy = state;
    size_t live_at_stop = state.live;
    state.window = 0;
    state.paused = 0;
    pthread_mutex_unlock(&table_lock);
    if (copy.window)
        write_result(&copy, live_at_stop);
}

/* Counts a block the real allocator just returned; returns p. */
static void *after_alloc(void *p, size_t size)
{
    if (!p)
        return p;
    if (size == ALLOC_COUNTER_MARK_START)
        open_window();
    else if (size == ALLOC_COUNTER_MARK_STOP)
        close_window();
    else if (size == ALLOC_COUNTER_MARK_PAUSE || size == ALLOC_COUNTER_MARK_RESUME)
        set_paused(size == ALLOC_COUNTER_MARK_PAUSE);
    else if (size == ALLOC_COUNTER_MARK_CHECKPOINT)
        checkpoint();
    else if (size >= ALLOC_COUNTER_TRACK_MIN)
        track_block(p, size);
    return p;
}

/* Forgets p before it goes back to the real allocator. */
static void before_free(void *p)
{
    if (p && real.usable_size(p) >= ALLOC_COUNTER_TRACK_MIN)
        (void)untrack_block(p);
}

/* ---- wrappers ---- */

EXPORT void *malloc(size_t size)
{
    if (!real_ready())
        return boot_alloc(16, size);
    return after_alloc(real.malloc(size), size);
}

EXPORT void *calloc(size_t n, size_t each)
{
    size_t size;
    if (__builtin_mul_overflow(n, each, &size)) {
        errno = ENOMEM;
        return NULL;
    }
    if (!real_ready())
        return boot_alloc(16, size);
    return after_alloc(real.calloc(n, each), size);
}

EXPORT void free(void *p)
{
    if (!p || in_boot_arena(p))
        return;
    if (!real_ready())
        return; /* cannot happen: only boot_arena blocks exist before the look-up */
    before_free(p);
    real.free(p);
}

static void *realloc_from_boot(void *p, size_t size)
{
    void *q = malloc(size);
    if (q && p) {
        size_t room = (size_t)(boot_arena + sizeof boot_arena - (unsigned char *)p);
        memcpy(q, p, size < room ? size : room);
    }
    return q;
}

EXPORT void *realloc(void *p, size_t size)
{
    if (!real_ready() || in_boot_arena(p))
        return realloc_from_boot(p, size);
    if (!p)
        return malloc(size);
    if (size == 0) {
        free(p);
        return NULL;
    }
    size_t old = real.usable_size(p) >= ALLOC_COUNTER_TRACK_MIN ? untrack_block(p) : 0;
    void *q = real.realloc(p, size);
    if (!q) {
        if (old)
            track_block(p, old); /* p is still allocated and unchanged */
        return NULL;
    }
    return after_alloc(q, size);
}

EXPORT void *reallocarray(void *p, size_t n, size_t each)
{
    size_t size;
    if (__builtin_mul_overflow(n, each, &size)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (!real_ready()) {
        *out = boot_alloc(align, size);
        return *out ? 0 : ENOMEM;
    }
    int rc = real.posix_memalign(out, align, size);
    if (rc == 0)
        after_alloc(*out, size);
    return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (!real_ready())
        return boot_alloc(align, size);
    void *p = real.aligned_alloc ? real.aligned_alloc(align, size) : real.memalign(align, size);
    return after_alloc(p, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
    if (!real_ready())
        return boot_alloc(align, size);
    return after_alloc(real.memalign(align, size), size);
}

EXPORT void *valloc(size_t size)
{
    if (!real_ready())
        return boot_alloc(4096, size);
    void *p = real.valloc ? real.valloc(size) : real.memalign(4096, size);
    return after_alloc(p, size);
}

EXPORT void *pvalloc(size_t size)
{
    size_t page = 4096, rounded = (size + page - 1) & ~(page - 1);
    if (!real_ready())
        return boot_alloc(page, rounded);
    void *p = real.pvalloc ? real.pvalloc(size) : real.memalign(page, rounded);
    return after_alloc(p, rounded);
}
