/* olla_onnx._olla: the library inside a Python process (the package's
 * __init__.py checks the arguments and speaks onnx.ModelProto; this file
 * turns them into olla_options and runs the library).
 *
 * Every call runs the library in a thread of its own with the GIL released,
 * while the calling thread waits for it: other Python threads go on, and
 * the main thread looks at Python's signals every WAIT_SLICE seconds, so
 * Ctrl-C raises KeyboardInterrupt within that time. An interrupted call asks
 * the library to stop (olla_stop_requested), waits for its thread, and
 * leaves no output file.
 *
 * One call at a time uses the library in a process (library_lock): the stop
 * request and the record of files being written are process-wide. Calls
 * from other threads wait for the lock with the GIL released. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "olla.h"
#include "passes/runtime/olla_exec_order.h"

#define WAIT_SLICE 0.05          /* seconds between two looks at Python's signals */
#define WORKER_STACK (64u << 20) /* bytes: the CLI's main thread has the process's stack limit */

static PyObject *olla_error_type; /* olla_onnx.OllaError */
static pthread_mutex_t library_lock = PTHREAD_MUTEX_INITIALIZER;

typedef enum { CALL_OPTIMIZE, CALL_CHECK, CALL_SHAPES } call_kind;

/* One call: its arguments, its results, and the hand-over between the
 * waiting thread and the worker. */
typedef struct call {
    call_kind kind;
    char *path;          /* the model's file, or NULL: */
    Py_buffer data;      /* its bytes (held while the worker runs) */
    int have_data;
    olla_options opt;
    olla_dim_binding *dims;
    olla_input_shape *shapes;
    int use_value_info;  /* shapes */
    char *output;        /* optimize: also write the model here (as the command line does), or NULL */
    /* results */
    olla_error err;
    uint8_t *bytes;      /* optimize: the planned model */
    size_t n_bytes;
    char *text;          /* optimize: the report; shapes: the document */
    /* hand-over */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int running;  /* the worker holds the library and runs the call */
    int finished; /* the call has run; the worker waits for settled */
    int cancel;   /* interrupted: stop, and leave no output */
    int settled;  /* the caller has decided cancel for good */
    int done;     /* the worker is through */
} call;

/* ---- the worker ---- */

static olla_status load(call *c, olla_model **m)
{
    if (c->path)
        return olla_model_load(c->path, m, &c->err);
    return olla_model_load_bytes(c->data.buf, (size_t)c->data.len, "<memory>", NULL, m, &c->err);
}

static olla_status run_optimize(call *c, const olla_model *m)
{
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    olla_status st = olla_optimize(m, &c->opt, &plan, &rep, &c->err);
    if (st == OLLA_OK && !(c->text = olla_report_to_json(&rep, 0)))
        st = olla_error_set(&c->err, OLLA_ERR_INTERNAL, "out of memory writing the report");
    if (st == OLLA_OK)
        st = olla_write_model_bytes(m, plan, &c->bytes, &c->n_bytes, &c->err);
    if (st == OLLA_OK && c->output && !olla_stop_requested)
        st = olla_write_model(m, plan, c->output, &c->err);
    olla_report_clear(&rep);
    olla_plan_free(plan);
    return st;
}

static void run_call(call *c)
{
    olla_model *m = NULL;
    olla_status st = load(c, &m);
    if (st == OLLA_OK && c->kind != CALL_SHAPES)
        st = olla_model_check_dim_names(m, c->opt.dims, c->opt.n_dims, &c->err);
    if (st == OLLA_OK && c->kind == CALL_OPTIMIZE)
        run_optimize(c, m);
    else if (st == OLLA_OK && c->kind == CALL_CHECK)
        olla_check_model(m, &c->opt, &c->err);
    else if (st == OLLA_OK)
        olla_model_shapes_json(m, &c->opt, c->use_value_info, &c->text, &c->err);
    olla_model_free(m);
}

/* Under c->lock: the worker ran the call; wait for the caller to say
 * whether it was interrupted (so that an interruption always removes the
 * output, however late it came), then clean up. */
static void settle(call *c)
{
    pthread_mutex_lock(&c->lock);
    c->running = 0;
    c->finished = 1;
    pthread_cond_broadcast(&c->cond);
    while (!c->settled)
        pthread_cond_wait(&c->cond, &c->lock);
    int interrupted = c->cancel;
    pthread_mutex_unlock(&c->lock);
    if (interrupted)
        olla_write_abandon(); /* none of its output stays */
    olla_write_forget();
    olla_stop_requested = 0;
}

/* Takes the library, waiting in slices so that a call interrupted while
 * another thread's call runs gives up at once; 0 when interrupted. Holding
 * the library, the call is marked running (from then on Ctrl-C stops it). */
static int take_library(call *c)
{
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(WAIT_SLICE * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int got = pthread_mutex_timedlock(&library_lock, &ts) == 0;
        pthread_mutex_lock(&c->lock);
        int cancelled = c->cancel;
        if (got && !cancelled) {
            olla_stop_requested = 0; /* ours alone while we hold the library */
            c->running = 1;
        }
        pthread_mutex_unlock(&c->lock);
        if (got && cancelled)
            pthread_mutex_unlock(&library_lock);
        if (cancelled)
            return 0;
        if (got)
            return 1;
    }
}

static void *worker(void *arg)
{
    call *c = arg;
    if (take_library(c)) {
        run_call(c);
        settle(c);
        pthread_mutex_unlock(&library_lock);
    }
    pthread_mutex_lock(&c->lock);
    c->done = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Waits up to seconds (< 0: for good) until the call has run (or, never
 * started, is done); 1 when it has. */
static int wait_finished(call *c, double seconds)
{
    pthread_mutex_lock(&c->lock);
    if (seconds < 0) {
        while (!c->finished && !c->done)
            pthread_cond_wait(&c->cond, &c->lock);
    } else if (!c->finished && !c->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)(seconds * 1e9);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        while (!c->finished && !c->done && pthread_cond_timedwait(&c->cond, &c->lock, &ts) != ETIMEDOUT)
            ;
    }
    int finished = c->finished || c->done;
    pthread_mutex_unlock(&c->lock);
    return finished;
}

/* The caller's word is final: the worker may clean up and end. */
static void release_worker(call *c)
{
    pthread_mutex_lock(&c->lock);
    c->settled = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* Ctrl-C: a call not started yet never starts; a running one is asked to stop. */
static void cancel(call *c)
{
    pthread_mutex_lock(&c->lock);
    c->cancel = 1;
    if (c->running)
        olla_stop_requested = 1;
    pthread_mutex_unlock(&c->lock);
}

/* Runs the call in a worker thread with the GIL released; 0 when it ran,
 * -1 with a Python exception set (KeyboardInterrupt, or the thread could
 * not start). */
static int run_released(call *c)
{
    pthread_attr_t attr;
    pthread_t th;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    /* the worker takes no signal: they reach the Python threads */
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int e = pthread_create(&th, &attr, worker, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (e != 0) {
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->cond);
        errno = e;
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    int interrupted = 0;
    for (;;) {
        int finished;
        Py_BEGIN_ALLOW_THREADS
        finished = wait_finished(c, WAIT_SLICE);
        Py_END_ALLOW_THREADS
        if (finished)
            break;
        if (PyErr_CheckSignals() < 0) { /* a handler raised, KeyboardInterrupt say */
            interrupted = 1;
            cancel(c);
            break;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    wait_finished(c, -1);
    release_worker(c);
    pthread_join(th, NULL);
    Py_END_ALLOW_THREADS
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    return interrupted ? -1 : 0;
}

/* ---- arguments ---- */

/* Text from the library as str: names in a model need not be UTF-8, so
 * bytes that are not become U+FFFD. */
static PyObject *text_of(const char *s)
{
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* A library error as a Python one: bad arguments (usage) are ValueError,
 * the rest OllaError with the library's exit code in .code. */
static void raise_error(const olla_error *err)
{
    PyObject *msg = text_of(err->message);
    if (!msg)
        return;
    if (err->code == OLLA_ERR_USAGE) {
        PyErr_SetObject(PyExc_ValueError, msg);
        Py_DECREF(msg);
        return;
    }
    PyObject *exc = PyObject_CallOneArg(olla_error_type, msg);
    Py_DECREF(msg);
    if (!exc)
        return;
    PyObject *code = PyLong_FromLong(err->code ? (long)err->code : 3);
    if (code && PyObject_SetAttrString(exc, "code", code) == 0)
        PyErr_SetObject(olla_error_type, exc);
    Py_XDECREF(code);
    Py_DECREF(exc);
}

static char *dup_path(PyObject *o, const char *what)
{
    char *s;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(o, &s, &n) < 0)
        return NULL;
    if ((Py_ssize_t)strlen(s) != n) {
        PyErr_Format(PyExc_ValueError, "%s: a path with a NUL byte", what);
        return NULL;
    }
    char *d = strdup(s);
    if (!d)
        PyErr_NoMemory();
    return d;
}

/* [(name, value), ...] into opt->dims. */
static int read_dims(call *c, PyObject *list)
{
    PyObject *seq = PySequence_Fast(list, "dims must be a list of (name, value) pairs");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int ok = (c->dims = calloc((size_t)n + 1, sizeof *c->dims)) != NULL || PyErr_NoMemory();
    c->opt.dims = c->dims;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        const char *name;
        long long value;
        ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "sL", &name, &value);
        if (ok && !(c->dims[i].name = strdup(name)))
            ok = PyErr_NoMemory() != NULL;
        if (ok) {
            c->dims[i].value = value;
            c->opt.n_dims = (int)i + 1;
        }
    }
    Py_DECREF(seq);
    return ok ? 0 : -1;
}

/* One input shape: (name, [d0, d1, ...]) with -1 for an unknown dimension. */
static int read_shape(olla_input_shape *s, PyObject *item)
{
    const char *name;
    PyObject *dims;
    if (!PyArg_ParseTuple(item, "sO", &name, &dims))
        return 0;
    PyObject *ds = PySequence_Fast(dims, "an input shape is a list of dimensions");
    if (!ds)
        return 0;
    Py_ssize_t rank = PySequence_Fast_GET_SIZE(ds);
    int64_t *v = calloc((size_t)rank + 1, sizeof *v);
    int ok = v != NULL || PyErr_NoMemory();
    for (Py_ssize_t k = 0; ok && k < rank; k++) {
        v[k] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(ds, k));
        ok = !(v[k] == -1 && PyErr_Occurred());
    }
    Py_DECREF(ds);
    if (ok && !(s->name = strdup(name)))
        ok = PyErr_NoMemory() != NULL;
    if (!ok) {
        free(v);
        return 0;
    }
    s->rank = (int)rank;
    s->dims = v;
    return 1;
}

/* [(name, dims), ...] into opt->input_shapes. */
static int read_shapes(call *c, PyObject *list)
{
    PyObject *seq = PySequence_Fast(list, "input_shapes must be a list of (name, dims) pairs");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int ok = (c->shapes = calloc((size_t)n + 1, sizeof *c->shapes)) != NULL || PyErr_NoMemory();
    c->opt.input_shapes = c->shapes;
    for (Py_ssize_t i = 0; ok && i < n; i++)
        if ((ok = read_shape(&c->shapes[i], PySequence_Fast_GET_ITEM(seq, i))))
            c->opt.n_input_shapes = (int)i + 1;
    Py_DECREF(seq);
    return ok ? 0 : -1;
}

/* The model: bytes of a path (is_path) or of a serialized model. */
static int read_model(call *c, PyObject *model, int is_path)
{
    if (is_path)
        return (c->path = dup_path(model, "model")) ? 0 : -1;
    if (PyObject_GetBuffer(model, &c->data, PyBUF_SIMPLE) < 0)
        return -1;
    c->have_data = 1;
    return 0;
}

static void call_free(call *c)
{
    if (c->have_data)
        PyBuffer_Release(&c->data);
    for (int i = 0; i < c->opt.n_dims; i++)
        free((char *)c->dims[i].name);
    free(c->dims);
    for (int i = 0; i < c->opt.n_input_shapes; i++) {
        free((char *)c->shapes[i].name);
        free((int64_t *)c->shapes[i].dims);
    }
    free(c->shapes);
    free(c->path);
    free(c->output);
    free(c->bytes);
    free(c->text);
}

static void call_init(call *c, call_kind kind)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    olla_options_init(&c->opt);
    c->opt.verbosity = 0; /* a library call prints nothing */
}

/* Runs a call whose arguments are read; 0, or -1 with an exception set. */
static int run(call *c)
{
    if (run_released(c) < 0)
        return -1;
    if (c->err.code != OLLA_OK) {
        raise_error(&c->err);
        return -1;
    }
    return 0;
}

/* ---- the module's functions ---- */

static PyObject *py_optimize(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"model",         "is_path",     "dims",          "input_shapes",        "runtime",
                            "sharing",       "memory_limit", "time_limit",   "align",               "keep_order",
                            "strict_shapes", "allow_unknown_sizes", "output", NULL};
    PyObject *model, *dims, *shapes, *output;
    const char *runtime, *sharing, *limit;
    int is_path, keep_order, strict, allow_unknown;
    double time_limit;
    long long align;
    call c;
    call_init(&c, CALL_OPTIMIZE);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OpOOsszdLpppO", names, &model, &is_path, &dims, &shapes, &runtime,
                                     &sharing, &limit, &time_limit, &align, &keep_order, &strict, &allow_unknown,
                                     &output))
        return NULL;
    PyObject *result = NULL;
    olla_error err = {0};
    c.opt.time_limit = time_limit;
    c.opt.alignment = align;
    c.opt.keep_order = keep_order;
    c.opt.strict_shapes = strict;
    c.opt.allow_unknown_sizes = allow_unknown;
    if (strcmp(sharing, "runtime") != 0 && strcmp(sharing, "none") != 0) {
        PyErr_Format(PyExc_ValueError, "sharing must be 'runtime' or 'none', not '%s'", sharing);
        goto out;
    }
    c.opt.sharing = strcmp(sharing, "none") == 0 ? OLLA_SHARING_NONE : OLLA_SHARING_RUNTIME;
    if (olla_runtime_parse(runtime, &c.opt.runtime, &err) != OLLA_OK ||
        (limit && olla_memory_limit_parse(limit, &c.opt.memory_limit, &err) != OLLA_OK)) {
        raise_error(&err);
        goto out;
    }
    if (limit && keep_order) {
        PyErr_SetString(PyExc_ValueError, "memory_limit needs the order to change; it cannot go with keep_order");
        goto out;
    }
    if (read_model(&c, model, is_path) < 0 || read_dims(&c, dims) < 0 || read_shapes(&c, shapes) < 0 ||
        (output != Py_None && !(c.output = dup_path(output, "output"))) || run(&c) < 0)
        goto out;
    PyObject *report = text_of(c.text);
    if (report)
        result = Py_BuildValue("(y#N)", (const char *)c.bytes, (Py_ssize_t)c.n_bytes, report);
out:
    call_free(&c);
    return result;
}

static PyObject *py_check(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"model", "is_path", "dims", "input_shapes", "strict_shapes", NULL};
    PyObject *model, *dims, *shapes;
    int is_path, strict;
    call c;
    call_init(&c, CALL_CHECK);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OpOOp", names, &model, &is_path, &dims, &shapes, &strict))
        return NULL;
    c.opt.strict_shapes = strict;
    int ok = read_model(&c, model, is_path) == 0 && read_dims(&c, dims) == 0 && read_shapes(&c, shapes) == 0 &&
             run(&c) == 0;
    call_free(&c);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_shapes(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"model", "is_path", "dims", "input_shapes", "strict_shapes", "value_info", NULL};
    PyObject *model, *dims, *shapes;
    int is_path, strict, value_info;
    call c;
    call_init(&c, CALL_SHAPES);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OpOOpp", names, &model, &is_path, &dims, &shapes, &strict,
                                     &value_info))
        return NULL;
    c.opt.strict_shapes = strict;
    c.use_value_info = value_info;
    PyObject *result = NULL;
    if (read_model(&c, model, is_path) == 0 && read_dims(&c, dims) == 0 && read_shapes(&c, shapes) == 0 &&
        run(&c) == 0)
        result = text_of(c.text);
    call_free(&c);
    return result;
}

/* The library's own figure for one plan, for the overhead benchmark: seconds
 * of olla_model_load_bytes + olla_optimize + olla_write_model_bytes on the
 * model's bytes, timed in C with the GIL released (no thread, no signals). */
static PyObject *py_time_library(PyObject *self, PyObject *args)
{
    Py_buffer data;
    double time_limit;
    if (!PyArg_ParseTuple(args, "y*d", &data, &time_limit))
        return NULL;
    olla_options opt;
    olla_options_init(&opt);
    opt.verbosity = 0;
    opt.time_limit = time_limit;
    olla_error err = {0};
    struct timespec t0, t1;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&library_lock);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    olla_model *m = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    uint8_t *bytes = NULL;
    size_t n = 0;
    if (olla_model_load_bytes(data.buf, (size_t)data.len, "<memory>", NULL, &m, &err) == OLLA_OK &&
        olla_optimize(m, &opt, &plan, &rep, &err) == OLLA_OK) {
        char *text = olla_report_to_json(&rep, 0);
        olla_write_model_bytes(m, plan, &bytes, &n, &err);
        free(text);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(bytes);
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(m);
    pthread_mutex_unlock(&library_lock);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    if (err.code != OLLA_OK) {
        raise_error(&err);
        return NULL;
    }
    return PyFloat_FromDouble((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
}

static PyMethodDef methods[] = {
    {"optimize", (PyCFunction)(void (*)(void))py_optimize, METH_VARARGS | METH_KEYWORDS,
     "optimize(model, is_path, dims, input_shapes, runtime, sharing, memory_limit, time_limit, align, keep_order, "
     "strict_shapes, allow_unknown_sizes, output) -> (bytes, report_json); see olla_onnx.optimize"},
    {"check", (PyCFunction)(void (*)(void))py_check, METH_VARARGS | METH_KEYWORDS,
     "check(model, is_path, dims, input_shapes, strict_shapes) -> None; see olla_onnx.check"},
    {"shapes", (PyCFunction)(void (*)(void))py_shapes, METH_VARARGS | METH_KEYWORDS,
     "shapes(model, is_path, dims, input_shapes, strict_shapes, value_info) -> json; see olla_onnx.shapes"},
    {"time_library", py_time_library, METH_VARARGS,
     "time_library(model_bytes, time_limit) -> seconds the library takes to load, plan and pack the model"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "olla_onnx._olla",
                                    "olla-onnx's library in the Python process (use the olla_onnx package).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__olla(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    olla_error_type = PyErr_NewExceptionWithDoc(
        "olla_onnx.OllaError",
        "The library could not read or plan the model; the message names the problem and where it is. "
        ".code is the command line's exit code for it (1 bad input, 3 internal error).",
        NULL, NULL);
    if (!olla_error_type || PyModule_AddObjectRef(m, "OllaError", olla_error_type) < 0 ||
        PyModule_AddStringConstant(m, "__version__", OLLA_VERSION_STRING) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
