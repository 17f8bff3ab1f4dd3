// What ONNX Runtime allocates while it runs a model, measured in the process.
//
//   tests/ort/measure.sh [--lib PATH] model.onnx [--dim name=value ...] [--runs N]
//        [--opt disabled|basic|extended|all] [--threads N] [--seed N]
//        [--arena on|off] [--pattern on|off] [--window run|all]
//   tests/ort/measure.sh [--lib PATH] model.onnx [more.onnx ...] --settings all [options]
//   (or: LD_PRELOAD=build/tests/ort/libolla_alloc_counter.so node tests/ort/measure.mjs ...)
//
// Needs the allocation counter (alloc_counter.c) preloaded. Loads the model in
// onnxruntime-node with the configuration of harness.mjs, makes deterministic
// inputs, and runs it N times (default 2: the first run plans as it goes, the
// second uses the memory pattern). Each run is bracketed by the counter's
// start and stop marks, and one JSON line per run is printed:
//   {"run":1,"peak_bytes":P,"live_at_start":L,"all_threads_peak_bytes":A,"peak_above_start":Q,"blocks":B}
// P: the peak of the bytes of blocks of 4 KiB or more that the thread calling
//    session.run allocated during it and that are still live: ORT's
//    intermediate tensors, outputs and kernel scratch (ORT allocates them on
//    that thread), plus the JavaScript copies of the outputs;
// L: bytes of such blocks live when the run started (the inputs, the session);
// A: as P, for the blocks any thread allocated (adds what Node's own threads
//    allocate meanwhile: up to ~200 KB on a loaded machine);
// Q: the peak of all live such blocks, minus L (lower than A when blocks
//    allocated before the run are freed during it);
// B: blocks of 4 KiB or more the calling thread allocated during the run.
// With --settings all, every choice of enableCpuMemArena and enableMemPattern
// for each model given, in one process (the models share their inputs when
// they have the same), one line per model and setting:
//   {"model":M,"arena":A,"pattern":P,"first_run_bytes":F,"steady_bytes":S}
// F: P of the first run of a fresh session; S: the most held over its first
// three runs, in one window (a garbage collection between runs frees the
// JavaScript copies of the outputs; its own blocks are left out).
// Exit 0; 2 usage, or the counter is not loaded; 77 "SKIP model: reason" when
// ONNX Runtime cannot load or run a model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  parseArgs, makeFeeds, tryOpenSession, firstLine, EXIT_USAGE, EXIT_SKIP,
} from './harness.mjs';

const TOOL = 'measure.mjs';
const MARK_START_BYTES = 1000003; // ALLOC_COUNTER_MARK_START in alloc_counter.c
const MARK_STOP_BYTES = 1000033; // ALLOC_COUNTER_MARK_STOP
const MARK_CHECKPOINT_BYTES = 1000013; // ALLOC_COUNTER_MARK_CHECKPOINT
const MARK_PAUSE_BYTES = 1000037; // ALLOC_COUNTER_MARK_PAUSE
const MARK_RESUME_BYTES = 1000039; // ALLOC_COUNTER_MARK_RESUME

const options = parseArgs(TOOL,
  'tests/ort/measure.sh [--lib PATH] model.onnx [--dim name=value ...] [--runs N] [--opt LEVEL] [--threads N] ' +
  '[--seed N] [--arena on|off] [--pattern on|off] [--window run|all] [--settings all]',
  process.argv.slice(2), {
    '--settings': (v, o) => {
      if (v !== 'all') return `--settings takes all, got '${v}'`;
      o.settings = v;
      return null;
    },
    '--window': (v, o) => {
      if (v !== 'run' && v !== 'all') return `--window takes run or all, got '${v}'`;
      o.window = v;
      return null;
    },
    '--runs': (v, o) => {
      if (!/^\d+$/.test(v) || Number(v) < 1) return `--runs takes a positive integer, got '${v}'`;
      o.runs = Number(v);
      return null;
    },
  }, true);
if (options.models.length > 1 && options.settings !== 'all') {
  console.error(`${TOOL}: several models are measured only with --settings all`);
  process.exit(EXIT_USAGE);
}
const feedCache = new Map();
const runs = options.runs || 2;

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'olla-measure-'));
const outFile = path.join(outDir, 'window.json');
process.env.ALLOC_COUNTER_OUT = outFile;
process.on('exit', () => fs.rmSync(outDir, { recursive: true, force: true }));

// The result the counter wrote at the last stop mark, or null when none.
function readWindow() {
  if (!fs.existsSync(outFile)) return null;
  const result = JSON.parse(fs.readFileSync(outFile, 'utf8'));
  fs.rmSync(outFile);
  return result;
}

// The marks: one allocation of the mark's size (kept referenced, so that no
// optimizer can drop it).
let lastMark = null;
function mark(bytes) {
  lastMark = new ArrayBuffer(bytes);
  return lastMark.byteLength;
}

function counterLoaded() {
  mark(MARK_START_BYTES);
  mark(MARK_STOP_BYTES);
  return readWindow() !== null;
}

if (!counterLoaded()) {
  console.error(`${TOOL}: the allocation counter is not loaded, so nothing can be measured. Build it ` +
    '(cmake --build build) and run through tests/ort/measure.sh, which preloads build/tests/ort/libolla_alloc_counter.so, ' +
    'or set LD_PRELOAD to that library yourself.');
  process.exit(EXIT_USAGE);
}

// V8 compiles the binding's JavaScript lazily, on first use: blocks of 8-32
// KB (parser and bytecode zones, up to ~90 KB at their peak) that would count
// in the first run's window although ONNX Runtime allocates none of them. A
// throwaway session of the same model, run once with the same inputs and then
// released, takes the same JavaScript paths before any window opens; the
// measured session's first run is still ONNX Runtime's first run of it. It
// also drops its outputs and collects, as a measured run does: the functions
// that does were compiled inside the first window otherwise (16 KB).
// (measure.sh also turns V8's baseline compiler off: it compiled functions
// grown hot in the middle of later windows, 12 KB at a time.)
async function warmUp(model, more = {}) {
  const { session: s, error: loadError } = await tryOpenSession(options, more, model);
  if (loadError) return; /* the measured session reports it */
  const { feeds, error } = makeFeeds(s, options, TOOL, feedCache);
  if (!error) {
    try {
      dropOutputs(await s.run(feeds)); // what a measured run does after it, compiled here
      await collect();
    } catch (e) {
      /* the measured run reports it */
    }
  }
  await s.release();
}

// Drops a run's results: dispose lets go of each output's buffer (without
// it V8 kept one run's copies alive into the next run now and then, whatever
// the collections).
function dropOutputs(outputs) {
  for (const t of Object.values(outputs)) if (typeof t.dispose === 'function') t.dispose();
}

function report(label) {
  const w = readWindow();
  if (!w) {
    console.error(`${TOOL}: the counter wrote no result for ${label}`);
    process.exit(EXIT_USAGE);
  }
  if (w.error) {
    console.error(`${TOOL}: the counter failed in ${label}: ${w.error}`);
    process.exit(EXIT_USAGE);
  }
  return {
    peak_bytes: w.caller_peak_bytes, live_at_start: w.live_at_start,
    all_threads_peak_bytes: w.all_threads_peak_bytes, peak_above_start: w.peak_live - w.live_at_start,
    blocks: w.caller_blocks, checkpoint_peak_bytes: w.checkpoint_peak_bytes,
  };
}

// Two garbage collections with a turn of the event loop between (V8 frees
// array buffers after a turn), when node runs with --expose-gc (measure.sh).
async function collect() {
  if (!globalThis.gc) return;
  globalThis.gc();
  await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
}

// One session measured: `runs` runs, each in its window, or all in one
// (spanAll). Returns { lines } to print, or { skip }: why ONNX Runtime
// cannot load or run the model.
async function measureSession(model, sessionOptions, runs, spanAll) {
  const { session, error: loadError } = await tryOpenSession(options, sessionOptions, model);
  if (loadError) return { skip: loadError };
  const { feeds, error } = makeFeeds(session, options, TOOL, feedCache);
  if (error) {
    await session.release();
    return { skip: error };
  }
  const lines = [];
  // Start from a collected heap (what earlier sessions left, the feeds of
  // earlier models): a collection V8 starts in the middle of a window
  // allocates blocks of its own there (measured: 89 KB on the 150-output
  // model after the corpus in one process).
  await collect();
  if (spanAll) mark(MARK_START_BYTES);
  for (let run = 1; run <= runs; run++) {
    let outputs;
    if (!spanAll) mark(MARK_START_BYTES);
    try {
      outputs = await session.run(feeds);
    } catch (e) {
      mark(MARK_STOP_BYTES);
      readWindow();
      await session.release();
      return { skip: `ONNX Runtime cannot run it: ${firstLine(e)}` };
    }
    dropOutputs(outputs);
    outputs = null;
    if (spanAll && run === 1) mark(MARK_CHECKPOINT_BYTES);
    if (spanAll) {
      // A collection between runs (measure.sh starts node with --expose-gc),
      // so that V8's timing does not decide the figure: the JavaScript copies
      // of a run's outputs are gone before the next run. One collection is
      // not enough (V8 frees array buffers after a turn of the event loop:
      // with one, a set of copies sometimes lived on); two with a turn
      // between gave the same figures every time. The collection's own
      // blocks (V8's work lists, 8 KiB each) are outside the window (the
      // counter's pause and resume marks); the copies it frees still leave it.
      mark(MARK_PAUSE_BYTES);
      await collect();
      mark(MARK_RESUME_BYTES);
      continue;
    }
    mark(MARK_STOP_BYTES);
    lines.push({ run, ...report(`run ${run}`) });
  }
  if (spanAll) {
    mark(MARK_STOP_BYTES);
    const w = report(`runs 1-${runs}`);
    lines.push({ runs, ...w, first_run_peak_bytes: w.checkpoint_peak_bytes });
  }
  await session.release();
  return { lines };
}

if (options.settings === 'all') {
  // Every choice of onnxruntime-node's two memory settings, each in fresh
  // sessions: the first run, then the most held over three runs. The first
  // session with the CPU memory arena also makes a one-time block of ORT's
  // own (7,680 bytes, kept for the process): a throwaway session with the
  // arena takes it before any window. A model ONNX Runtime cannot load or
  // run gets one line {"model":M,"skip":REASON}; with one model, that is a
  // skip of the whole command (77).
  let arenaWarm = false;
  for (const model of options.models) {
    await warmUp(model);
    if (!arenaWarm) await warmUp(model, { enableCpuMemArena: true });
    arenaWarm = true;
    let skip = null;
    for (const arena of [false, true]) {
      for (const pattern of [true, false]) {
        if (skip) continue;
        const more = { enableCpuMemArena: arena, enableMemPattern: pattern };
        const result = await measureSession(model, more, 3, true);
        if (result.skip) {
          skip = result.skip;
          continue;
        }
        const [steady] = result.lines;
        console.log(JSON.stringify({
          model, arena, pattern, first_run_bytes: steady.first_run_peak_bytes, steady_bytes: steady.peak_bytes,
        }));
      }
    }
    if (skip && options.models.length === 1) {
      console.log(`SKIP ${model}: ${skip}`);
      process.exit(EXIT_SKIP);
    }
    if (skip) console.log(JSON.stringify({ model, skip }));
  }
} else {
  await warmUp(options.model);
  if (options.arena) await warmUp(options.model, { enableCpuMemArena: true });
  const result = await measureSession(options.model, {}, runs, options.window === 'all');
  if (result.skip) {
    console.log(`SKIP ${options.model}: ${result.skip}`);
    process.exit(EXIT_SKIP);
  }
  for (const line of result.lines) console.log(JSON.stringify(line));
}
