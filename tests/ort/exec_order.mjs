// The order in which ONNX Runtime runs a model's nodes, from its profiler.
//
//   node tests/ort/exec_order.mjs model.onnx [--dim name=value ...]
//        [--opt disabled|basic|extended|all] [--threads N] [--seed N]
//
// Loads the model with the configuration of harness.mjs plus enableProfiling,
// runs it once on deterministic inputs and prints the names of the nodes whose
// kernels ran, in the order they ran, one per line: the profiler's events with
// cat "Node" and a name ending in "_kernel_time", without that suffix. The
// profile file is written to a temporary folder and removed.
//
// Names: ORT reports a node by its name in the model; a node with an empty
// name as OpType_i, where i is ORT's index of the node: its position in
// graph.node counting the nodes that are not Constant (Constant nodes become
// initializers at load and take no index). Constant nodes, and the Cast pairs
// ORT drops at load even with optimizations off, never run and are not
// printed. check_exec_order.py maps the names back to graph.node.
// Exit 0; 2 usage; 77 "SKIP model: reason" when ONNX Runtime cannot load or
// run the model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, makeFeeds, openSession, firstLine, EXIT_SKIP, EXIT_USAGE } from './harness.mjs';

const TOOL = 'exec_order.mjs';
const SUFFIX = '_kernel_time';

const options = parseArgs(TOOL,
  'node tests/ort/exec_order.mjs model.onnx [--dim name=value ...] [--opt LEVEL] [--threads N] [--seed N]',
  process.argv.slice(2));

const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'olla-exec-order-'));
process.on('exit', () => fs.rmSync(profileDir, { recursive: true, force: true }));

const session = await openSession(options, {
  enableProfiling: true,
  profileFilePrefix: path.join(profileDir, 'profile'),
});
const { feeds, error } = makeFeeds(session, options, TOOL);
if (error) {
  console.log(`SKIP ${options.model}: ${error}`);
  process.exit(EXIT_SKIP);
}
try {
  await session.run(feeds);
} catch (e) {
  console.log(`SKIP ${options.model}: ONNX Runtime cannot run it: ${firstLine(e)}`);
  process.exit(EXIT_SKIP);
}
session.endProfiling();
await session.release();

const files = fs.readdirSync(profileDir).filter((f) => f.endsWith('.json'));
if (files.length !== 1) {
  console.error(`${TOOL}: expected one profile file in ${profileDir}, found ${files.length}`);
  process.exit(EXIT_USAGE);
}
const events = JSON.parse(fs.readFileSync(path.join(profileDir, files[0]), 'utf8'));
const kernels = events.filter((e) => e.cat === 'Node' && typeof e.name === 'string' && e.name.endsWith(SUFFIX));
process.stdout.write(kernels.map((e) => `${e.name.slice(0, -SUFFIX.length)}\n`).join(''));
