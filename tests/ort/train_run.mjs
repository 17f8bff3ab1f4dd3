// Runs one training graph (forward, loss, backward, update) in ONNX
// Runtime's training WebAssembly build, once or --runs times in one session,
// and prints what it computed and how much heap it needed (tests/ort/README.md,
// "Running training graphs").
//
//   node tests/ort/train_run.mjs model.onnx [--dim name=value ...] [--seed N]
//        [--opt disabled|basic|extended|all] [--arena on|off] [--pattern on|off]
//        [--runs N] [--dump DIR] [--order]
//
// Every graph input that is not an initializer is fed (parameters, data,
// targets, gradient accumulation buffers, lazy_reset_grad...), with values
// that depend only on the seed and the input's name, element type and shape:
// floats uniform in [-1, 1), integers 0 or 1 (valid class labels and
// indices), bools 0 or 1. Symbolic dimensions are bound with --dim; one left
// unbound is a usage error. Prints one line of JSON:
//   {"model":..., "runtime":"onnxruntime-web 1.18.0 training (wasm, 1 thread)",
//    "opt":"disabled", "arena":false, "pattern":false, "runs":1, "seed":1, "dims":{...},
//    "inputs":[{"name","dtype","shape","sha256"}...],
//    "outputs":[{"name","dtype","shape","sha256"}...],
//    "heap_start_bytes":S, "heap_loaded_bytes":L, "heap_bytes":H,
//    "heap_bytes_runs":[H1, ..., H], "load_seconds":..., "run_seconds":...}
// sha256 is the hash of the tensor's exact bytes (little-endian, bools one
// byte each). heap_bytes is the WebAssembly heap's byte length after the run:
// the heap never shrinks and grows by exactly what is asked (rounded up to
// 64 KiB), so it is the high-water mark of everything the process allocated
// in it up to then: ORT's fixed overhead, the session and model, the copies
// of the inputs, the run's tensors and the outputs. heap_start_bytes is its
// size when the module was instantiated, heap_loaded_bytes after the session
// was created. A process runs one session: a second session would start from
// the heap the first one left.
//
// --runs N runs the step N times in the session with the same feeds, the
// results of each run released before the next, as a training loop would.
// heap_bytes_runs holds the heap after each run, heap_bytes after the last:
// the most held over the N runs. With the memory pattern on (--pattern on),
// ONNX Runtime allocates tensor by tensor on the first run and records where
// each went; later runs allocate the recorded blocks at once. Every run must
// give the outputs of the first, bit for bit (else exit 1, naming the output:
// a step with Dropout draws new numbers each run, with a seed too, since its
// generator goes on from run to run); the
// outputs reported are the first run's. run_seconds is the time in the N
// runs.
//
// --dump DIR writes every input and output as a .npy file and DIR/manifest.json
// ({"inputs":[{"name","file"}...],"outputs":[...]}).
// --order runs with ONNX Runtime's profiler on and adds "executed": the names
// of the nodes whose kernels ran, in the order they ran (a node without a name
// is OpType_index, index counting the non-Constant nodes in listing order).
// The profiler keeps its events in the heap, so the heap figures of such a
// run are not those of a plain run (they are reported with "profiled":true).
// Graph optimizations are off by default (--opt): with them on, ORT fuses and
// removes nodes (common subexpression elimination merges copies of a node).
// The CPU memory arena is off by default (--arena on), and so is the memory
// pattern (--pattern on): the figures are then those of the first run of a
// session that allocates each tensor as it comes.
//
// Exit 0; 1 the model cannot be read, loaded (an operator without a kernel in
// this build is named), fed or run; 2 usage; 3 the runtime is not installed
// or its bundle is not the one this harness patches.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadOrtTraining, readModel, firstLine, HarnessError, ORT_WEB_VERSION } from './ort_training.mjs';
import { parseOptions, shared, checkModels, parseOrExit, usageExit, UsageError } from './options.mjs';
import { makeRandom } from './random.mjs';

const TOOL = 'train_run.mjs';
const USAGE = 'node tests/ort/train_run.mjs model.onnx [--dim name=value ...] [--seed N] ' +
  '[--opt disabled|basic|extended|all] [--arena on|off] [--pattern on|off] [--runs N] [--dump DIR] [--order]';
const EXIT_BAD_INPUT = 1, EXIT_INTERNAL = 3;

// Prints a usage error and exits 2.
function usage(msg) {
  usageExit(TOOL, USAGE, msg);
}

// The command line as options; exits 2 on a usage error.
function parseArgs(argv) {
  const o = {
    model: null, dims: new Map(), seed: 1, opt: 'disabled', arena: false, pattern: false, runs: 1, dump: null,
    order: false,
  };
  return parseOrExit(TOOL, USAGE, () => {
    const models = parseOptions(argv, o, {
      ...shared('--dim', '--seed', '--opt', '--arena', '--pattern', '--runs'),
      '--dump': (v) => { o.dump = v; },
    }, { '--order': () => { o.order = true; } });
    if (models.length === 0) throw new UsageError('give the path of an .onnx model');
    if (models.length > 1) throw new UsageError(`give one model, got '${models[0]}' and '${models[1]}'`);
    if (o.order && o.runs > 1) throw new UsageError(`--order reports one run's order; give it without --runs ${o.runs}`);
    checkModels(models);
    o.model = models[0];
    return o;
  });
}

function badInput(model, msg) {
  console.error(`${TOOL}: ${model}: ${msg}`);
  process.exit(EXIT_BAD_INPUT);
}

// FNV-1a of a string, to give each input its own stream of numbers.
function hashName(s) {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

// The 32-bit finalizer of MurmurHash3: nearby seeds give unrelated states.
function mix32(h) {
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, uint64: BigUint64Array,
  int32: Int32Array, uint32: Uint32Array, int16: Int16Array, uint16: Uint16Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};

// The values of one input, or null for an element type the harness cannot make.
function makeData(seed, name, type, shape) {
  const Array_ = ARRAYS[type];
  if (!Array_) return null;
  const n = shape.reduce((p, d) => p * d, 1);
  const rand = makeRandom(mix32((mix32(seed) ^ hashName(`${name}\u0000${type}`)) >>> 0));
  const data = new Array_(n);
  if (type === 'float32' || type === 'float64') {
    for (let i = 0; i < n; i++) data[i] = rand() * 2 - 1;
  } else if (type === 'int64' || type === 'uint64') {
    for (let i = 0; i < n; i++) data[i] = rand() < 0.5 ? 0n : 1n;
  } else {
    for (let i = 0; i < n; i++) data[i] = rand() < 0.5 ? 0 : 1;
  }
  return data;
}

function bytesOf(data) {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

function sha256(data) {
  return crypto.createHash('sha256').update(bytesOf(data)).digest('hex');
}

const NPY_DESCR = {
  float32: '<f4', float64: '<f8', float16: '<f2', int64: '<i8', uint64: '<u8', int32: '<i4', uint32: '<u4',
  int16: '<i2', uint16: '<u2', int8: '|i1', uint8: '|u1', bool: '|b1',
};

function writeNpy(file, type, shape, data) {
  const descr = NPY_DESCR[type];
  if (!descr) throw new HarnessError(`cannot write element type ${type} as .npy`);
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(pre, 0);
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), bytesOf(data)]));
}

// "... is not a registered function/op" and "Could not find an implementation
// for Op(version) node with name 'x'": the operator ORT has no kernel for.
function missingKernel(message, model) {
  let m = /([\w.]*:?[\w.]+)\((-?\d+)\) is not a registered function\/op/.exec(message);
  let domain = '', op = null;
  if (m) {
    const full = m[1];
    const colon = full.lastIndexOf(':');
    if (colon >= 0) { domain = full.slice(0, colon); op = full.slice(colon + 1); } else { op = full; }
  } else {
    m = /Could not find an implementation for (\w+)\((\d+)\) node with name '([^']*)'/.exec(message);
    if (!m) return null;
    op = m[1];
    const node = model.nodes.find((n) => n.opType === op && n.name === m[3]);
    domain = node ? node.domain : null;
  }
  const nodes = model.nodes.filter((n) => n.opType === op && (domain === null || n.domain === domain ||
    (domain === 'ai.onnx' && n.domain === '')));
  const names = nodes.slice(0, 3).map((n) => `'${n.name}'`).join(', ');
  const where = nodes.length ? ` (${nodes.length} node${nodes.length > 1 ? 's' : ''}${names ? `, e.g. ${names}` : ''})` : '';
  const label = domain ? `${domain}:${op}` : op;
  return `operator ${label} has no kernel in onnxruntime-web ${ORT_WEB_VERSION}'s training build${where}; ` +
    'replace it with ONNX or com.microsoft operators this build has';
}

// The web build's profiler prints its JSON on stdout (through the console
// the module bound when it loaded) when the profile ends: capture what is
// written meanwhile, keep the kernels ("cat":"Node", "..._kernel_time") in
// the order they ran.
function executedOrder(session, model) {
  const chunks = [];
  const write = process.stdout.write;
  process.stdout.write = (chunk, ...rest) => {
    chunks.push(String(chunk));
    const cb = rest.find((r) => typeof r === 'function');
    if (cb) cb();
    return true;
  };
  try {
    session.endProfiling();
  } finally {
    process.stdout.write = write;
  }
  let events;
  try {
    events = JSON.parse(chunks.join(''));
  } catch (e) {
    badInput(model, `the profile ONNX Runtime printed is not JSON (${firstLine(e)}); cannot report the order`);
  }
  const suffix = '_kernel_time';
  return events.filter((e) => e.cat === 'Node' && typeof e.name === 'string' && e.name.endsWith(suffix))
    .map((e) => e.name.slice(0, -suffix.length));
}

// ORT's error, one line. A C++ exception this build cannot describe reaches
// JavaScript as a bare number (the exception object's address).
function ortMessage(e) {
  const msg = firstLine(e).replace(/^Error: /, '');
  if (/^\d+$/.test(msg)) {
    return `a C++ exception without a message (this WebAssembly build drops it; exception object ${msg}): ` +
      'an operator rejected its inputs, outputs or attributes; check the model with onnx.checker and ' +
      "the operators' schemas";
  }
  return msg;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const bytes = fs.readFileSync(o.model);
  let model;
  try {
    model = readModel(bytes);
  } catch (e) {
    badInput(o.model, `not a readable ONNX model: ${firstLine(e)}`);
  }

  // The feeds: every graph input that is not an initializer.
  const feeds = [];
  for (const v of model.inputs) {
    if (model.initializers.has(v.name)) continue;
    if (v.kind !== 'tensor') badInput(o.model, `input '${v.name}' is a ${v.kind}; the harness can feed tensors only`);
    if (v.dims === null) badInput(o.model, `input '${v.name}' has no shape; declare its shape in the model`);
    const shape = v.dims.map((d, axis) => {
      if (typeof d === 'number' && d >= 0) return d;
      if (typeof d === 'string' && d !== '') {
        if (!o.dims.has(d)) usage(`dimension '${d}' of input '${v.name}' is not bound; give --dim ${d}=N`);
        return o.dims.get(d);
      }
      return badInput(o.model, `input '${v.name}' has an unknown dimension at axis ${axis}; give it a name or a value`);
    });
    const data = makeData(o.seed, v.name, v.type, shape);
    if (!data) badInput(o.model, `input '${v.name}' has element type ${v.type}, which the harness cannot make`);
    feeds.push({ name: v.name, type: v.type, shape, data });
  }

  let rt;
  try {
    rt = await loadOrtTraining();
  } catch (e) {
    console.error(`${TOOL}: ${firstLine(e)}`);
    process.exit(EXIT_INTERNAL);
  }
  const { ort } = rt;

  const t0 = performance.now();
  let session;
  try {
    session = await ort.InferenceSession.create(bytes, {
      executionProviders: ['wasm'],
      graphOptimizationLevel: o.opt,
      enableCpuMemArena: o.arena,
      enableMemPattern: o.pattern,
      executionMode: 'sequential',
      freeDimensionOverrides: Object.fromEntries(o.dims),
      logSeverityLevel: 3,
      enableProfiling: o.order,
    });
  } catch (e) {
    const msg = ortMessage(e);
    const kernel = missingKernel(msg, model);
    badInput(o.model, kernel ? `${kernel} (ONNX Runtime: ${msg})` : `ONNX Runtime cannot load it: ${msg}`);
  }
  const t1 = performance.now();
  const heapLoaded = rt.heapBytes();

  const names = new Set(session.inputNames);
  for (const f of feeds) {
    if (!names.has(f.name)) badInput(o.model, `input '${f.name}' of the graph is not an input of ONNX Runtime's session`);
  }
  const feedObj = {};
  for (const f of feeds) feedObj[f.name] = new ort.Tensor(f.type, f.data, f.shape);
  for (const name of session.inputNames) {
    if (!(name in feedObj)) badInput(o.model, `ONNX Runtime expects input '${name}', which the graph does not declare`);
  }

  // Each run's outputs: the first run's kept (copied out of the heap by the
  // web API), later runs' compared to them by hash and released.
  let outputs = null;
  const heapRuns = [];
  let runMs = 0;
  for (let run = 1; run <= o.runs; run++) {
    let results;
    const t2 = performance.now();
    try {
      results = await session.run(feedObj);
    } catch (e) {
      badInput(o.model, `ONNX Runtime cannot run it${o.runs > 1 ? ` (run ${run})` : ''}: ${ortMessage(e)}`);
    }
    runMs += performance.now() - t2;
    heapRuns.push(rt.heapBytes());
    const got = session.outputNames.map((name) => {
      const t = results[name];
      return { name, dtype: t.type, shape: Array.from(t.dims), data: t.data };
    });
    for (const out of got) {
      if (!ArrayBuffer.isView(out.data)) badInput(o.model, `output '${out.name}' of type ${out.dtype} cannot be hashed`);
      out.sha256 = sha256(out.data);
    }
    if (outputs === null) {
      outputs = got;
    } else {
      got.forEach((out, i) => {
        if (out.sha256 !== outputs[i].sha256) {
          badInput(o.model, `output '${out.name}' of run ${run} differs from the first run's with the same ` +
            'inputs; the step draws new numbers each run (Dropout or another random operator), so --runs cannot be used on it');
        }
      });
    }
    for (const name of session.outputNames) {
      if (typeof results[name].dispose === 'function') results[name].dispose();
    }
  }
  const heapAfter = heapRuns[heapRuns.length - 1];
  const executed = o.order ? executedOrder(session, o.model) : null;

  if (o.dump) {
    fs.mkdirSync(o.dump, { recursive: true });
    const manifest = { inputs: [], outputs: [] };
    feeds.forEach((f, i) => {
      const file = `input_${i}.npy`;
      writeNpy(path.join(o.dump, file), f.type, f.shape, f.data);
      manifest.inputs.push({ name: f.name, file });
    });
    outputs.forEach((out, i) => {
      const file = `output_${i}.npy`;
      writeNpy(path.join(o.dump, file), out.dtype, out.shape, out.data);
      manifest.outputs.push({ name: out.name, file });
    });
    fs.writeFileSync(path.join(o.dump, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
  }

  const report = {
    model: o.model,
    runtime: `onnxruntime-web ${ORT_WEB_VERSION} training (wasm, 1 thread)`,
    opt: o.opt,
    arena: o.arena,
    pattern: o.pattern,
    runs: o.runs,
    seed: o.seed,
    dims: Object.fromEntries(o.dims),
    inputs: feeds.map((f) => ({ name: f.name, dtype: f.type, shape: f.shape, sha256: sha256(f.data) })),
    outputs: outputs.map((x) => ({ name: x.name, dtype: x.dtype, shape: x.shape, sha256: x.sha256 })),
    heap_start_bytes: rt.heapStartBytes(),
    heap_loaded_bytes: heapLoaded,
    heap_bytes: heapAfter,
    heap_bytes_runs: heapRuns,
    load_seconds: Number(((t1 - t0) / 1000).toFixed(3)),
    run_seconds: Number((runMs / 1000).toFixed(3)),
  };
  if (executed) {
    report.profiled = true;
    report.executed = executed;
  }
  await session.release();
  // Exit once the line is written: a report of more than 64 KiB written to a
  // pipe is cut short by an exit before the write completes.
  await new Promise((resolve) => process.stdout.write(JSON.stringify(report) + '\n', resolve));
  process.exit(0);
}

main().catch((e) => {
  console.error(`${TOOL}: internal error: ${e && e.stack ? e.stack : e}`);
  process.exit(EXIT_INTERNAL);
});
