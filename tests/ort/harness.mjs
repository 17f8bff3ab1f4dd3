// Shared parts of the ONNX Runtime measurement tools (measure.mjs,
// exec_order.mjs): command-line options, the session configuration the
// measurements are made under, and deterministic inputs.
//
// The configuration (tests/ort/README.md, "Measuring what ONNX Runtime
// allocates"): CPU execution provider, sequential execution, graph
// optimizations off unless --opt says otherwise, CPU memory arena off unless
// --arena on, memory pattern on unless --pattern off, symbolic dimensions
// bound with freeDimensionOverrides from --dim, one intra-op thread unless
// --threads says otherwise. onnxruntime-node's own defaults are arena on and
// memory pattern on (--arena on --pattern on); it has no setting for the
// arena's extend strategy, so the arena grows as ORT's default
// (kNextPowerOfTwo) does.
import fs from 'node:fs';
import ort from 'onnxruntime-node';

export const OPT_LEVELS = ['disabled', 'basic', 'extended', 'all'];
export const EXIT_USAGE = 2;
export const EXIT_SKIP = 77;

export function firstLine(e) {
  return String(e && e.message ? e.message : e).split('\n')[0].trim();
}

// Parses argv against a usage line; `extra` maps an option such as '--runs'
// to a function (value, options) => void that stores it or returns an error.
export function parseArgs(tool, usageLine, argv, extra = {}) {
  const usage = (msg) => {
    if (msg) console.error(`${tool}: ${msg}`);
    console.error(`usage: ${usageLine}`);
    process.exit(EXIT_USAGE);
  };
  const options = { model: null, dims: new Map(), opt: 'disabled', threads: 1, seed: 1, arena: false, pattern: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--dim') {
      const v = value();
      const m = /^([^=]+)=(\d+)$/.exec(v);
      if (!m) usage(`--dim takes name=value with a non-negative integer value, got '${v}'`);
      options.dims.set(m[1], Number(m[2]));
    } else if (a === '--opt') {
      options.opt = value();
      if (!OPT_LEVELS.includes(options.opt)) usage(`--opt takes one of ${OPT_LEVELS.join(', ')}, got '${options.opt}'`);
    } else if (a === '--arena' || a === '--pattern') {
      const v = value();
      if (v !== 'on' && v !== 'off') usage(`${a} takes on or off, got '${v}'`);
      options[a.slice(2)] = v === 'on';
    } else if (a === '--threads' || a === '--seed') {
      const v = value();
      if (!/^\d+$/.test(v) || (a === '--threads' && Number(v) < 1)) usage(`${a} takes a positive integer, got '${v}'`);
      options[a.slice(2)] = Number(v);
    } else if (extra[a]) {
      const err = extra[a](value(), options);
      if (err) usage(err);
    } else if (a === '-h' || a === '--help') {
      usage();
    } else if (a.startsWith('--')) {
      usage(`unknown option '${a}'`);
    } else if (options.model === null) {
      options.model = a;
    } else {
      usage(`give one model, got '${options.model}' and '${a}'`);
    }
  }
  if (options.model === null) usage('give the path of an .onnx model');
  if (!fs.existsSync(options.model)) usage(`cannot open '${options.model}': no such file; give the path of an .onnx model`);
  return options;
}

export function sessionOptions(options, more = {}) {
  return {
    executionProviders: ['cpu'],
    executionMode: 'sequential',
    graphOptimizationLevel: options.opt,
    enableCpuMemArena: options.arena,
    enableMemPattern: options.pattern,
    intraOpNumThreads: options.threads,
    interOpNumThreads: 1,
    freeDimensionOverrides: Object.fromEntries(options.dims),
    logSeverityLevel: 3,
    ...more,
  };
}

// mulberry32: a small deterministic generator, so that a seed names the inputs.
function makeRandom(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function floatToHalfBits(v) {
  const x = new Uint32Array(new Float32Array([v]).buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return sign; // |v| < 2^-14: zero (inputs are in [-1, 1))
  return sign | (exp << 10) | ((x & 0x7fffff) >>> 13);
}

// Floats uniform in [-1, 1); integers 0 or 1 (valid as indices, counts and
// axes); bools random. null for an element type it cannot make.
function makeTensor(type, shape, rand) {
  const n = shape.reduce((p, d) => p * d, 1);
  const bit = () => (rand() < 0.5 ? 0 : 1);
  const uni = () => rand() * 2 - 1;
  const make = {
    float32: () => Float32Array.from({ length: n }, uni),
    float64: () => Float64Array.from({ length: n }, uni),
    float16: () => Uint16Array.from({ length: n }, () => floatToHalfBits(uni())),
    int64: () => BigInt64Array.from({ length: n }, () => BigInt(bit())),
    uint64: () => BigUint64Array.from({ length: n }, () => BigInt(bit())),
    int32: () => Int32Array.from({ length: n }, bit),
    uint32: () => Uint32Array.from({ length: n }, bit),
    int16: () => Int16Array.from({ length: n }, bit),
    uint16: () => Uint16Array.from({ length: n }, bit),
    int8: () => Int8Array.from({ length: n }, bit),
    uint8: () => Uint8Array.from({ length: n }, bit),
    bool: () => Uint8Array.from({ length: n }, bit),
  }[type];
  return make ? new ort.Tensor(type, make(), shape) : null;
}

// Inputs for every graph input of the session (weights given as inputs
// included). Symbolic dims take the --dim value, else 1 (noted on stderr).
// Returns { feeds } or { error } naming the input that cannot be made.
export function makeFeeds(session, options, tool) {
  const rand = makeRandom(options.seed);
  const feeds = {};
  const defaulted = new Set();
  for (const m of session.inputMetadata) {
    if (m.isTensor === false) return { error: `input '${m.name}' is not a tensor; only tensor inputs are supported` };
    const shape = (m.shape || []).map((d) => {
      if (typeof d === 'number' && d >= 0) return d;
      if (typeof d === 'string' && d !== '' && options.dims.has(d)) return options.dims.get(d);
      defaulted.add(typeof d === 'string' && d !== '' ? d : '?');
      return 1;
    });
    const t = makeTensor(m.type, shape, rand);
    if (!t) return { error: `input '${m.name}' has element type ${m.type}, which ${tool} cannot generate` };
    feeds[m.name] = t;
  }
  for (const d of defaulted) console.error(`${tool}: note: dimension '${d}' is not bound by --dim; using 1`);
  return { feeds };
}

export async function openSession(options, more = {}) {
  try {
    return await ort.InferenceSession.create(options.model, sessionOptions(options, more));
  } catch (e) {
    console.log(`SKIP ${options.model}: ONNX Runtime cannot load it: ${firstLine(e)}`);
    process.exit(EXIT_SKIP);
  }
}
