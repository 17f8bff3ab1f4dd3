// Runs two training graphs, an input and a rewritten one with the same graph
// inputs and outputs, each in its own process (train_run.mjs) with the same
// feeds, and says whether every output is bit-identical and what heap each
// needed (tests/ort/README.md, "Running training graphs").
//
//   node tests/ort/train_compare.mjs A.onnx B.onnx [--dim name=value ...] [--seed N]
//        [--opt disabled|basic|extended|all] [--arena on|off] [--pattern on|off] [--runs N] [--order]
//
// The options are passed to both runs. Prints one line of JSON:
//   {"identical":true|false, "outputs":N, "differences":[{"name","what"}...],
//    "a":{"model","heap_bytes","heap_bytes_runs","heap_start_bytes","heap_loaded_bytes","load_seconds",
//         "run_seconds"},
//    "b":{...}, "heap_saved_bytes":A-B, "heap_saved_fraction":(A-B)/A}
// identical: the two models have the same inputs (name, element type, shape,
// and so the same values: they depend on the seed and these only) and the
// same outputs, and each output has the same element type, shape and bytes
// (sha256). differences lists what is not (an input or output missing from
// one side, another type or shape, other bytes). With --order, a and b also
// carry "executed" (train_run.mjs --order; heap figures then include the
// profiler's events).
//
// Exit 0 identical; 1 not identical (the differences are also written on
// stderr); 2 usage; 3 a model could not be run (train_run.mjs's error is
// repeated on stderr) or the runtime is missing.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseOptions, shared, checkModels, parseOrExit, UsageError, EXIT_USAGE } from './options.mjs';

const TOOL = 'train_compare.mjs';
const USAGE = 'node tests/ort/train_compare.mjs A.onnx B.onnx [--dim name=value ...] [--seed N] ' +
  '[--opt disabled|basic|extended|all] [--arena on|off] [--pattern on|off] [--runs N] [--order]';
const RUN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'train_run.mjs');
const EXIT_DIFFER = 1, EXIT_RUN_FAILED = 3;

// The command line as { models, pass }: the two models, and the options
// (checked here as train_run.mjs checks them) to pass to both runs. Exits 2
// on a usage error.
function parseArgs(argv) {
  const pass = [];
  const values = {};
  for (const [name, check] of Object.entries(shared('--dim', '--seed', '--opt', '--arena', '--pattern', '--runs'))) {
    values[name] = (v, o) => {
      check(v, o);
      pass.push(name, v);
    };
  }
  return parseOrExit(TOOL, USAGE, () => {
    const models = parseOptions(argv, { dims: new Map() }, values, { '--order': () => pass.push('--order') });
    if (models.length !== 2) throw new UsageError('give exactly two models: the input and the rewritten one');
    checkModels(models);
    return { models, pass };
  });
}

// Runs train_run.mjs in a fresh process; returns its report, or exits.
function run(model, pass) {
  const r = spawnSync(process.execPath, [RUN, model, ...pass], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) {
    console.error(`${TOOL}: cannot start node: ${r.error.message}`);
    process.exit(EXIT_RUN_FAILED);
  }
  if (r.status === EXIT_USAGE) {
    process.stderr.write(r.stderr);
    process.exit(EXIT_USAGE);
  }
  if (r.status !== 0) {
    console.error(`${TOOL}: ${model} could not be run (train_run.mjs exit ${r.status}):`);
    process.stderr.write(r.stderr);
    process.exit(EXIT_RUN_FAILED);
  }
  return JSON.parse(r.stdout);
}

function describe(t) {
  return `${t.dtype}[${t.shape.join(',')}]`;
}

// Differences between two lists of tensors of reports a and b.
function compareTensors(kind, la, lb, differences) {
  const mb = new Map(lb.map((t) => [t.name, t]));
  const ma = new Map(la.map((t) => [t.name, t]));
  for (const ta of la) {
    const tb = mb.get(ta.name);
    if (!tb) {
      differences.push({ name: ta.name, what: `${kind} of A only` });
    } else if (describe(ta) !== describe(tb)) {
      differences.push({ name: ta.name, what: `${kind} is ${describe(ta)} in A, ${describe(tb)} in B` });
    } else if (ta.sha256 !== tb.sha256) {
      differences.push({ name: ta.name, what: `${kind} bytes differ (sha256 ${ta.sha256.slice(0, 12)}... vs ${tb.sha256.slice(0, 12)}...)` });
    }
  }
  for (const tb of lb) {
    if (!ma.has(tb.name)) differences.push({ name: tb.name, what: `${kind} of B only` });
  }
}

function summary(r) {
  const s = {
    model: r.model, heap_bytes: r.heap_bytes, heap_bytes_runs: r.heap_bytes_runs, heap_start_bytes: r.heap_start_bytes,
    heap_loaded_bytes: r.heap_loaded_bytes, load_seconds: r.load_seconds, run_seconds: r.run_seconds,
  };
  if (r.executed) s.executed = r.executed;
  return s;
}

const { models, pass } = parseArgs(process.argv.slice(2));
const a = run(models[0], pass);
const b = run(models[1], pass);
const differences = [];
compareTensors('input', a.inputs, b.inputs, differences);
compareTensors('output', a.outputs, b.outputs, differences);
const saved = a.heap_bytes - b.heap_bytes;
const report = {
  identical: differences.length === 0,
  outputs: a.outputs.length,
  differences,
  a: summary(a),
  b: summary(b),
  heap_saved_bytes: saved,
  heap_saved_fraction: Number((saved / a.heap_bytes).toFixed(6)),
};
process.stdout.write(JSON.stringify(report) + '\n');
if (differences.length) {
  const shown = 10;
  for (const d of differences.slice(0, shown)) console.error(`${TOOL}: ${models[1]}: '${d.name}': ${d.what}`);
  if (differences.length > shown) console.error(`${TOOL}: ... and ${differences.length - shown} more differences`);
  process.exitCode = EXIT_DIFFER; // not process.exit: the report may still be on its way to a pipe
}
