// ONNX Runtime equivalence check for olla-onnx.
//
//   node tests/ort/compare.mjs A.onnx B.onnx [--dim name=value ...] [--seed N] [--opt LEVEL]
//
// Loads both models in ONNX Runtime (CPU, one thread, sequential execution),
// feeds both the same pseudo-random inputs (every graph input that is not an
// initializer, weights given as graph inputs included), runs both and
// compares every output of A with the output of B of the same name, bit for
// bit (the raw bytes of the typed arrays, plus element type and shape).
//
// Inputs: symbolic dimensions take the --dim value; an unbound symbolic (or
// unnamed unknown) dimension is 1 and is reported. Floats are uniform in
// [-1, 1); integers are 0 or 1 (always valid as indices, counts, axes of a
// size >= 2 dimension); bools are random.
//
// --opt sets ONNX Runtime's graph optimization level (disabled, basic,
// extended, all; default disabled), so that every node runs as written and a
// different but valid node order cannot change which fusions apply.
//
// Exit codes:
//   0  "PASS A: N outputs identical"
//   1  "FAIL ...": an output differs (named), the outputs or inputs of the two
//      models do not match, or B cannot be loaded or run although A can
//   2  usage error
//   77 "SKIP A: <reason>": ONNX Runtime cannot load or run A (never a pass)
import ort from 'onnxruntime-node';
import { parseOptions, shared, checkModels, parseOrExit, UsageError, EXIT_USAGE } from './options.mjs';
import { makeRandom } from './random.mjs';

const EXIT_PASS = 0, EXIT_FAIL = 1, EXIT_SKIP = 77;
const TOOL = 'compare.mjs';
const USAGE = 'node tests/ort/compare.mjs A.onnx B.onnx [--dim name=value ...] [--seed N] [--opt LEVEL]';

// The command line as { a, b, dims, seed, opt }; exits 2 on a usage error.
function parseArgs(argv) {
  const o = { dims: new Map(), seed: 1, opt: 'disabled' };
  return parseOrExit(TOOL, USAGE, () => {
    const files = parseOptions(argv, o, shared('--dim', '--seed', '--opt'));
    if (files.length !== 2) throw new UsageError('give exactly two model files');
    checkModels(files);
    return { a: files[0], b: files[1], ...o };
  });
}

function floatToHalfBits(v) {
  const f = new Float32Array([v]);
  const x = new Uint32Array(f.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp <= 0) return sign; // |v| < 2^-14: flush to zero (inputs are in [-1, 1))
  return sign | (exp << 10) | (mant >>> 13);
}

function randomTensor(type, shape, rand) {
  const n = shape.reduce((p, d) => p * d, 1);
  const bit = () => (rand() < 0.5 ? 0 : 1);
  const uni = () => rand() * 2 - 1;
  let data;
  switch (type) {
    case 'float32': data = Float32Array.from({ length: n }, uni); break;
    case 'float64': data = Float64Array.from({ length: n }, uni); break;
    case 'float16': data = Uint16Array.from({ length: n }, () => floatToHalfBits(uni())); break;
    case 'int64': data = BigInt64Array.from({ length: n }, () => BigInt(bit())); break;
    case 'uint64': data = BigUint64Array.from({ length: n }, () => BigInt(bit())); break;
    case 'int32': data = Int32Array.from({ length: n }, bit); break;
    case 'uint32': data = Uint32Array.from({ length: n }, bit); break;
    case 'int16': data = Int16Array.from({ length: n }, bit); break;
    case 'uint16': data = Uint16Array.from({ length: n }, bit); break;
    case 'int8': data = Int8Array.from({ length: n }, bit); break;
    case 'uint8': data = Uint8Array.from({ length: n }, bit); break;
    case 'bool': data = Uint8Array.from({ length: n }, bit); break;
    case 'string': data = Array.from({ length: n }, () => (bit() ? 'b' : 'a')); break;
    default: return null;
  }
  return new ort.Tensor(type, data, shape);
}

function firstLine(e) {
  return String(e && e.message ? e.message : e).split('\n')[0].trim();
}

async function load(path, opt) {
  return ort.InferenceSession.create(path, {
    graphOptimizationLevel: opt,
    executionMode: 'sequential',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    logSeverityLevel: 3,
  });
}

function describeInput(meta) {
  return `${meta.type}[${(meta.shape || []).join(',')}]`;
}

function sameBytes(x, y) {
  if (Array.isArray(x.data) || Array.isArray(y.data)) {
    return Array.isArray(x.data) && Array.isArray(y.data) && x.data.length === y.data.length &&
      x.data.every((v, i) => v === y.data[i]);
  }
  const bx = Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength);
  const by = Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength);
  return bx.equals(by);
}

function firstDifference(x, y) {
  if (Array.isArray(x.data)) return '';
  const n = Math.min(x.data.length, y.data.length);
  let count = 0, first = -1;
  for (let i = 0; i < n; i++) {
    const a = x.data[i], b = y.data[i];
    const same = a === b || (typeof a === 'number' && Number.isNaN(a) && Number.isNaN(b));
    if (!same) { count++; if (first < 0) first = i; }
  }
  if (first < 0) return ' (values equal, bit patterns differ, e.g. -0 vs +0 or NaN payloads)';
  return ` (${count} of ${n} elements differ; first at flat index ${first}: ${x.data[first]} vs ${y.data[first]})`;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const fail = (msg) => { console.log(`FAIL ${args.b}: ${msg}`); process.exit(EXIT_FAIL); };
  const skip = (msg) => { console.log(`SKIP ${args.a}: ${msg}`); process.exit(EXIT_SKIP); };

  let sa, sb;
  try { sa = await load(args.a, args.opt); } catch (e) { skip(`ONNX Runtime cannot load it: ${firstLine(e)}`); }
  try { sb = await load(args.b, args.opt); } catch (e) {
    fail(`ONNX Runtime cannot load it although it loads ${args.a}: ${firstLine(e)}`);
  }

  // Same interface: the same non-initializer inputs of the same type and shape.
  const metaA = new Map(sa.inputMetadata.map((m) => [m.name, m]));
  const metaB = new Map(sb.inputMetadata.map((m) => [m.name, m]));
  for (const [name, m] of metaA) {
    const other = metaB.get(name);
    if (!other) fail(`input '${name}' of ${args.a} is not an input of this model`);
    if (describeInput(m) !== describeInput(other)) {
      fail(`input '${name}' is ${describeInput(other)} here but ${describeInput(m)} in ${args.a}`);
    }
  }
  for (const name of metaB.keys()) {
    if (!metaA.has(name)) fail(`input '${name}' is not an input of ${args.a}`);
  }
  const outA = [...sa.outputNames].sort();
  const outB = [...sb.outputNames].sort();
  if (outA.join('\n') !== outB.join('\n')) {
    fail(`outputs [${sb.outputNames.join(', ')}] differ from those of ${args.a} [${sa.outputNames.join(', ')}]`);
  }

  // One set of inputs, fed to both.
  const rand = makeRandom(args.seed);
  const feeds = {};
  const defaulted = new Set();
  for (const m of sa.inputMetadata) {
    if (m.isTensor === false) skip(`input '${m.name}' is not a tensor; only tensor inputs are supported`);
    const shape = (m.shape || []).map((d) => {
      if (typeof d === 'number' && d >= 0) return d;
      if (typeof d === 'string' && d !== '' && args.dims.has(d)) return args.dims.get(d);
      defaulted.add(typeof d === 'string' && d !== '' ? d : '?');
      return 1;
    });
    const t = randomTensor(m.type, shape, rand);
    if (!t) skip(`input '${m.name}' has element type ${m.type}, which the check cannot generate`);
    feeds[m.name] = t;
  }
  for (const d of defaulted) {
    console.error(`note: dimension '${d}' is not bound by --dim; using 1`);
  }

  let ra, rb;
  try { ra = await sa.run(feeds); } catch (e) { skip(`ONNX Runtime cannot run it: ${firstLine(e)}`); }
  try { rb = await sb.run(feeds); } catch (e) {
    fail(`ONNX Runtime cannot run it although it runs ${args.a}: ${firstLine(e)}`);
  }

  for (const name of sa.outputNames) {
    const x = ra[name], y = rb[name];
    if (x.type !== y.type) fail(`output '${name}' has type ${y.type}, ${args.a} gives ${x.type}`);
    if (x.dims.join(',') !== y.dims.join(',')) {
      fail(`output '${name}' has shape [${y.dims}], ${args.a} gives [${x.dims}]`);
    }
    if (!sameBytes(x, y)) fail(`output '${name}' differs from ${args.a}${firstDifference(x, y)}`);
  }
  console.log(`PASS ${args.a}: ${sa.outputNames.length} outputs identical`);
  await sa.release();
  await sb.release();
  process.exit(EXIT_PASS);
}

main().catch((e) => {
  console.error(`compare.mjs: internal error: ${firstLine(e)}`);
  process.exit(EXIT_USAGE);
});
