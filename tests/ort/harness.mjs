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
import ort from 'onnxruntime-node';
import { parseOptions, shared, checkModels, parseOrExit, UsageError } from './options.mjs';
import { makeRandom } from './random.mjs';

export { OPT_LEVELS, EXIT_USAGE } from './options.mjs';
export const EXIT_SKIP = 77;

export function firstLine(e) {
  return String(e && e.message ? e.message : e).split('\n')[0].trim();
}

// Parses argv against a usage line (options.mjs: the shared options, exit 2
// on a usage error); `extra` maps an option such as '--runs' to a function
// (value, options) that stores it or returns an error message. With many,
// several models may be given (options.models; options.model is the first).
export function parseArgs(tool, usageLine, argv, extra = {}, many = false) {
  const options = {
    model: null, models: [], dims: new Map(), opt: 'disabled', threads: 1, seed: 1, arena: false, pattern: true,
  };
  const values = shared('--dim', '--opt', '--arena', '--pattern', '--threads', '--seed');
  for (const [name, store] of Object.entries(extra)) {
    values[name] = (v, o) => {
      const err = store(v, o);
      if (err) throw new UsageError(err);
    };
  }
  return parseOrExit(tool, usageLine, () => {
    options.models = parseOptions(argv, options, values);
    if (options.models.length === 0) throw new UsageError('give the path of an .onnx model');
    if (options.models.length > 1 && !many) {
      throw new UsageError(`give one model, got '${options.models[0]}' and '${options.models[1]}'`);
    }
    checkModels(options.models);
    options.model = options.models[0];
    return options;
  });
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

function floatToHalfBits(v) {
  const x = new Uint32Array(new Float32Array([v]).buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return sign; // |v| < 2^-14: zero (inputs are in [-1, 1))
  return sign | (exp << 10) | ((x & 0x7fffff) >>> 13);
}

// The first FILL_BLOCK elements of an input are drawn one by one; the rest
// repeat them (copyWithin doubles the filled part), so that the weights of a
// large model given as inputs take milliseconds, not seconds. What ONNX
// Runtime allocates does not depend on the values (only control flow reads
// them: conditions and trip counts, which are small inputs drawn whole).
const FILL_BLOCK = 1 << 16;
const notedDims = new Set(); // dims noted as unbound, once per process

function fill(array, draw) {
  const n = array.length;
  const head = Math.min(n, FILL_BLOCK);
  for (let i = 0; i < head; i++) array[i] = draw();
  for (let done = head; done < n; done *= 2) array.copyWithin(done, 0, Math.min(done, n - done));
  return array;
}

// Floats uniform in [-1, 1); integers 0 or 1 (valid as indices, counts and
// axes); bools random. null for an element type it cannot make.
function makeTensor(type, shape, rand) {
  const n = shape.reduce((p, d) => p * d, 1);
  const bit = () => (rand() < 0.5 ? 0 : 1);
  const uni = () => rand() * 2 - 1;
  const make = {
    float32: () => fill(new Float32Array(n), uni),
    float64: () => fill(new Float64Array(n), uni),
    float16: () => fill(new Uint16Array(n), () => floatToHalfBits(uni())),
    int64: () => fill(new BigInt64Array(n), () => BigInt(bit())),
    uint64: () => fill(new BigUint64Array(n), () => BigInt(bit())),
    int32: () => fill(new Int32Array(n), bit),
    uint32: () => fill(new Uint32Array(n), bit),
    int16: () => fill(new Int16Array(n), bit),
    uint16: () => fill(new Uint16Array(n), bit),
    int8: () => fill(new Int8Array(n), bit),
    uint8: () => fill(new Uint8Array(n), bit),
    bool: () => fill(new Uint8Array(n), bit),
  }[type];
  return make ? new ort.Tensor(type, make(), shape) : null;
}

// Inputs for every graph input of the session (weights given as inputs
// included). Symbolic dims take the --dim value, else 1 (noted on stderr).
// Returns { feeds } or { error } naming the input that cannot be made. With
// a cache (a Map), an input of the same name, type and shape as one made
// before is that tensor again: sessions of one model, or of a model and its
// rewritten copy, run on the same inputs without making them twice.
export function makeFeeds(session, options, tool, cache = null) {
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
    const key = `${m.name}\u0000${m.type}\u0000${shape.join(',')}`;
    const t = (cache && cache.get(key)) || makeTensor(m.type, shape, rand);
    if (!t) return { error: `input '${m.name}' has element type ${m.type}, which ${tool} cannot generate` };
    if (cache) cache.set(key, t);
    feeds[m.name] = t;
  }
  for (const d of defaulted) {
    if (!notedDims.has(d)) console.error(`${tool}: note: dimension '${d}' is not bound by --dim; using 1`);
    notedDims.add(d);
  }
  return { feeds };
}

// { session } or { error }: why ONNX Runtime cannot load the model.
export async function tryOpenSession(options, more = {}, model = options.model) {
  try {
    return { session: await ort.InferenceSession.create(model, sessionOptions(options, more)) };
  } catch (e) {
    return { error: `ONNX Runtime cannot load it: ${firstLine(e)}` };
  }
}

export async function openSession(options, more = {}, model = options.model) {
  try {
    return await ort.InferenceSession.create(model, sessionOptions(options, more));
  } catch (e) {
    console.log(`SKIP ${model}: ONNX Runtime cannot load it: ${firstLine(e)}`);
    process.exit(EXIT_SKIP);
  }
}
