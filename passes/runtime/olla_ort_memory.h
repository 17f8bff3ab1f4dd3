/* olla-onnx: what ONNX Runtime allocates while it runs a graph in a given
 * order: a model of its CPU allocation planner and of the allocations its
 * kernels and its execution frame make.
 *
 * Usage:
 *
 *     olla_ort_memory *m;
 *     olla_ort_memory_options opt = olla_ort_memory_measured();
 *     olla_ort_memory_new(sized, declared, &opt, &m, &err);   // once per graph
 *     olla_ort_memory_result r;
 *     olla_ort_memory_eval(m, executed, n_executed, &r, &err); // once per order
 *     ... r.peak_bytes ...
 *     olla_ort_memory_free(m);
 *
 * The configuration modelled: onnxruntime 1.30 on the CPU execution
 * provider, sequential execution, graph optimizations off, the CPU memory
 * arena off (every tensor a malloc of its exact size), memory pattern on (the
 * figure is for the first run, which allocates tensor by tensor), one
 * intra-op thread. With optimizations on (ORT's default) nodes are fused and
 * the dims bound: other figures.
 *
 * The two graphs are built from one model: `sized` with the symbolic dims
 * bound (tensor bytes at the run's shapes), `declared` without bindings: the
 * static shapes as ORT plans on them (with optimizations off it never applies
 * freeDimensionOverrides, so `batch` stays a name). `executed` lists the op
 * indices in the order ORT runs them (its default order, see ORT_ORDER.md).
 * An op left out is one ORT does not run: a Constant (its output is an
 * initializer) or a Cast of a pair ORT drops at load (its readers read its
 * input); any other op left out is an error.
 *
 * The rules of ORT's planner (allocation_planner.cc), applied in that order:
 * - Use counts: every input occurrence of an executed node, one for each
 *   output, one for each graph output; graph inputs, initializers and
 *   Constant outputs are never planned and never freed.
 * - A graph output gets a buffer of its own (never shared, never freed).
 * - Alias (olla_sharing.h): the output is input 0's buffer, unconditionally.
 * - MayInplace: the output takes its input's buffer when that buffer has no
 *   other pending use (counting every tensor sharing it) and the two static
 *   shapes match (below).
 * - Otherwise, when some node reads the output: the most recently freed
 *   buffer whose tensor has the same element size and the same static shape
 *   (every dim equal as a value or as the same dim_param; an unknown dim
 *   matches nothing; strings never; an output of rank 0 never reuses).
 * - Otherwise a new buffer.
 * - A buffer goes back to the free list when the use counts of all tensors
 *   sharing it reach zero; an output no node reads goes there at once (and
 *   may be reused by a later tensor).
 * - At run time a buffer is freed after the last node, in the executed
 *   order, that reads a tensor sharing it; a buffer no node reads lives to
 *   the end of the run.
 *
 * What else the run allocates, all of it counted (ORT's own code, measured
 * in the process with tests/ort):
 * - Kernel scratch, live only during its node: Conv (float) MLAS's working
 *   buffer (none for a pointwise conv; one image's im2col, OutputSize * K
 *   floats, when the filters per group exceed the output's spatial size; else
 *   128 * 128 floats for one thread); ConvTranspose's column buffer
 *   (out channels per group * kernel size * input spatial size); MatMul's 64
 *   bytes of GEMM parameters per batched GEMM beyond 2 and three offset
 *   vectors of 8 bytes per GEMM when the batch dims do not fold into one
 *   GEMM; LRN's scale and padded-square buffers; Softmax/LogSoftmax (opset 13
 *   and later) with an axis other than the last transposes into two
 *   temporaries the size of its input; Where selects into two temporaries
 *   (the broadcasts of the condition with X and with Y) before it merges.
 * - The execution frame: 24 bytes per value of the graph for the whole run,
 *   and, when the run traces a memory pattern, at its start a hash table over
 *   the values (16-byte slots) built and dropped twice.
 * - The memory-pattern trace of the first run: 40 bytes per tensor allocated
 *   (not outputs), in a vector that doubles (old and new live at once while
 *   it grows), and at the end the pattern's hash table (24-byte slots).
 * - The feed and fetch lists of one Run call: per graph input and per graph
 *   output, vectors of 32, 32, 24 and 40 bytes an entry.
 * - An initializer or Constant that is a graph output is copied into a new
 *   buffer when the run starts.
 * With copy_outputs, the caller copies every output once more at the end of
 * the run while ORT's output lives (onnxruntime-node's binding does).
 *
 * Control flow (ort_control.c), when the options give the types of the
 * subgraphs' values (sized_types, declared_types): If, Loop and Scan run
 * their subgraphs (If's branch, the body) in execution frames of their own:
 * each subgraph is planned on its own by the same rules for the order ORT
 * runs it in, its values from the graphs around it are inputs (never
 * planned, never freed), and each execution of it allocates its tensors,
 * kernel scratch and frame bookkeeping while the node runs. A subgraph has
 * a memory pattern of its own (when the setting is on and every input of it
 * has a shape): its first execution in a session traces it, every later one
 * (the next Loop or Scan iteration, the next run) takes one block of the
 * pattern's size for its tensors. Per node (onnxruntime 1.30's CPU kernels):
 * - If: the branch the condition selects when the condition is a constant,
 *   else the branch that holds more on its own (the counted figure is then
 *   the larger branch's). An output whose declared shape in the branch is
 *   static is allocated before the branch runs; otherwise when the branch's
 *   node produces it, as the If's output (planned in the If's graph).
 * - Loop: the trip count and the initial condition must be constants and
 *   the body's condition output its condition input (or a constant). Each
 *   iteration allocates the body's outputs in the body's frame; the carried
 *   values of an iteration are freed when the iteration after the next one
 *   starts (the next one reads them), the scan outputs of every iteration
 *   live to the end, when the Loop allocates its outputs and copies them in.
 * - Scan (opset 9 and later): the state outputs are allocated first, then
 *   the scan outputs whose shape is static (else on the first iteration, when
 *   the body produces them), then two temporaries per state value (one for a
 *   sequence of two, none for one) that the iterations alternate through; a
 *   scan input or output on an axis other than 0 is transposed through a
 *   temporary of its size.
 * Without those types, or where something is not modelled (a trip count or
 * condition known only at run time, a subgraph output passed through from
 * its inputs, Scan of opset 8, a subgraph inference left out), the
 * subgraphs' memory is not counted: r.subgraphs_counted is 0 and
 * olla_ort_memory_note says why.
 *
 * Not modelled (the result says when the graph has them):
 * - Scratch of kernels other than those above (reductions' index vectors,
 *   Resize, LSTM, TopK...), kernels of other element types (Conv for
 *   float16...), sequence and optional values, strings' own heap blocks,
 *   more than one intra-op thread (Conv's buffer grows with the threads).
 * - Tensors whose size depends on the data (NonZero, Unique...): an error
 *   names the first one.
 * - What the caller's process adds: the Node binding opens V8 handle-scope
 *   blocks of 8,176 bytes while it converts many inputs (one for 107 inputs,
 *   two for 186, measured), which the harness counts and the model does not.
 * Measured (bench/RESULTS.md): exact to the byte on 13 of 17 runs of the
 * corpus and models/ at batch 1 and 32, the other four within 0.2% (the
 * binding's handle scopes); with ORT's default optimization level the
 * figures move by -39% to +61%.
 *
 * Cost: olla_ort_memory_new is O(graph and subgraphs); olla_ort_memory_eval
 * is O(nodes + edges) with no allocation, so an order search can call it
 * many times; with counted subgraphs it replays the run (ort_session.c),
 * O(nodes executed, every iteration counted), and allocates. */
#ifndef OLLA_ORT_MEMORY_H
#define OLLA_ORT_MEMORY_H

#include <stdint.h>

#include "olla_error.h"
#include "onnx/olla_graph.h"

struct olla_shape_table;

typedef struct olla_ort_memory olla_ort_memory;

typedef struct olla_ort_memory_options {
    /* Blocks smaller than this are not counted (0: every block). The
     * allocation counter of tests/ort counts blocks of 4,096 bytes and more. */
    int64_t min_block_bytes;
    /* 1: the run's bookkeeping (execution frame, memory-pattern trace, feed
     * and fetch lists) is counted; 0: tensors and kernel scratch only. */
    int count_bookkeeping;
    /* 1: each graph output is copied once more at the end of the run while
     * ORT's copy lives (onnxruntime-node's binding). */
    int copy_outputs;
    /* The inferred types of the model's values, subgraphs included
     * (passes/shapes/olla_shapes.h): with the symbolic dims bound, as sized
     * was built, and without bindings, as declared was. Both NULL: If, Loop
     * and Scan are not modelled. Borrowed; they must outlive the context. */
    const struct olla_shape_table *sized_types, *declared_types;
} olla_ort_memory_options;

/* What the harness of tests/ort measures: blocks of 4 KiB and more,
 * bookkeeping counted, outputs copied by the Node binding. */
olla_ort_memory_options olla_ort_memory_measured(void);
/* ORT's tensors and kernel scratch alone, every block counted. */
olla_ort_memory_options olla_ort_memory_tensors_only(void);

/* Where a tensor's bytes come from in the last evaluated order. */
typedef enum olla_ort_buffer_kind {
    OLLA_ORT_NOT_PLANNED = 0, /* graph input, initializer, Constant, not executed, or no such value */
    OLLA_ORT_OWN,             /* a new buffer of its own */
    OLLA_ORT_OUTPUT,          /* a graph output: a buffer of its own, never freed */
    OLLA_ORT_ALIAS,           /* a view of an input (Alias kernels) */
    OLLA_ORT_INPLACE,         /* written into a dying input (MayInplace kernels) */
    OLLA_ORT_REUSED           /* a freed buffer of the same element size and static shape */
} olla_ort_buffer_kind;

typedef struct olla_ort_memory_result {
    int64_t peak_bytes;     /* the peak of the counted bytes during the run */
    int peak_step;          /* position in executed of the node during which it is reached;
                               -1 the start of the run, n_executed its end */
    int64_t tensor_bytes;   /* at the peak: tensor buffers (intermediates and outputs) */
    int64_t scratch_bytes;  /* at the peak: kernel scratch of the peak's node */
    int64_t bookkeeping_bytes; /* at the peak: frame, trace, feed/fetch lists, output copies */
    int n_buffers;          /* buffers allocated for tensors during the run */
    int n_subgraph_ops;     /* executed ops holding subgraphs (If, Loop, Scan...) */
    int subgraphs_counted;  /* 1: their subgraphs' memory is counted (olla_ort_memory_note says why not) */
} olla_ort_memory_result;

/* Prepares the order-independent part. sized and declared must be built from
 * the same model (same ops and tensors); both are borrowed and must outlive
 * the context. opt NULL = olla_ort_memory_measured(). Errors: the graphs
 * differ (OLLA_ERR_INPUT), out of memory (OLLA_ERR_INTERNAL). */
olla_status olla_ort_memory_new(const olla_graph *sized, const olla_graph *declared,
                                const olla_ort_memory_options *opt, olla_ort_memory **out, olla_error *err);
void olla_ort_memory_free(olla_ort_memory *m);
/* Why the graph's subgraphs are not counted, naming the node and the reason;
 * "" when they are (or the graph has none). */
const char *olla_ort_memory_note(const olla_ort_memory *m);

/* Evaluates one executed order (op indices, each at most once, producers
 * first). Errors (OLLA_ERR_INPUT): an op twice or out of range, an op run
 * before the producer of an input, an op left out that ORT would run, an
 * executed op's output of unknown size. */
olla_status olla_ort_memory_eval(olla_ort_memory *m, const int *executed, int n_executed,
                                 olla_ort_memory_result *result, olla_error *err);

/* After an evaluation: how tensor t (a graph tensor index) got its bytes,
 * and the graph tensor whose buffer it uses (itself for OWN and OUTPUT, -1
 * when not planned). */
olla_ort_buffer_kind olla_ort_memory_buffer_kind(const olla_ort_memory *m, int t);
int olla_ort_memory_buffer_of(const olla_ort_memory *m, int t);
/* After an evaluation: the position in executed after which the buffer
 * tensor t owns (OWN) is freed; -1 when it lives to the end of the run (no
 * node reads it or a tensor sharing it) or t owns no freeable buffer. */
int olla_ort_memory_release_step(const olla_ort_memory *m, int t);

/* ---- sessions ----
 *
 * What a session holds over several runs under ORT's memory settings
 * (ort_session.c). onnxruntime-node's defaults are the CPU memory arena on
 * and the memory pattern on; it can turn either off (enableCpuMemArena,
 * enableMemPattern) but has no setting for the arena's extend strategy.
 * - Arena off: every tensor and scratch block is a malloc of its size, freed
 *   when released (the figure olla_ort_memory_eval gives for the first run).
 * - Arena on: ORT's BFC arena (ort_bfc.h) serves tensors and kernel scratch;
 *   the process holds its regions, which it never gives back, plus the
 *   regions' tables; the run's bookkeeping is malloc'd as before.
 * - Memory pattern: the first run traces the tensors it allocates (not graph
 *   outputs, not strings; sizes rounded up to 64 bytes) and packs them as
 *   ORT's MemPatternPlanner does (best fit over the gaps of the blocks live
 *   at each allocation); from the second run on, one block of the pattern's
 *   size holds them all, taken when the run starts and given back at its
 *   end, while graph outputs and kernel scratch are still allocated one by
 *   one. The pattern's table stays with the session.
 * The caller's copies of a run's outputs (copy_outputs) are gone before the
 * next run starts (a caller that drops each result; tests/ort/measure.mjs
 * collects garbage between runs). */
typedef struct olla_ort_settings {
    int arena;       /* 1: the CPU memory arena on (ORT's default) */
    int extend_same; /* with the arena: 1 kSameAsRequested, 0 kNextPowerOfTwo (the default) */
    int mem_pattern; /* 1: the memory pattern on (ORT's default) */
    int runs;        /* runs of one session, >= 1 */
} olla_ort_settings;

typedef struct olla_ort_session_result {
    int64_t first_run_bytes; /* the peak of the counted bytes during the first run */
    int first_run_step;      /* where: a position in executed, -1 the run's start, n_executed its end */
    int64_t peak_bytes;      /* the peak over all the runs, counting what earlier runs left held */
    int64_t arena_bytes;     /* the arena's regions at the end (0 without the arena) */
    int arena_regions;
    int64_t pattern_bytes;   /* the memory pattern's block (0 when none is used) */
} olla_ort_session_result;

/* Evaluates the order (as olla_ort_memory_eval) and replays the runs of a
 * session under settings s. Errors as olla_ort_memory_eval, and out of
 * memory (OLLA_ERR_INTERNAL). */
olla_status olla_ort_memory_session(olla_ort_memory *m, const int *executed, int n_executed,
                                    const olla_ort_settings *s, olla_ort_session_result *result, olla_error *err);

/* One-shot: new, eval, free with olla_ort_memory_measured(). */
olla_status olla_ort_allocated_bytes(const olla_graph *sized, const olla_graph *declared, const int *executed,
                                     int n_executed, int64_t *peak, olla_error *err);

#endif
