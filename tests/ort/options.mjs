// The command-line options of the ONNX Runtime tools (compare.mjs,
// train_run.mjs, train_compare.mjs, and through harness.mjs measure.mjs and
// exec_order.mjs): one loop over the arguments and one rule for each option
// they share. It imports nothing but node:fs, so that the tools of either
// runtime (onnxruntime-node, or the training WebAssembly build) load it.
//
// The rules:
//   --dim NAME=VALUE   binds a symbolic dimension. VALUE is a non-negative
//                      integer in decimal digits, at most 2^53 - 1; 0 is
//                      legal (ONNX allows a dimension of size 0: an empty
//                      tensor). A negative or fractional VALUE, one that is
//                      not a number, an empty NAME, or a NAME bound twice is
//                      a usage error that says which.
//   --seed N           an integer in [0, 2^32)
//   --opt LEVEL        disabled, basic, extended or all
//   --arena, --pattern on or off
//   --threads, --runs  a positive integer
// A usage error exits 2 with "TOOL: what is wrong" and the usage line
// (usageExit); -h or --help prints the usage line alone, also exit 2.
import fs from 'node:fs';

export const EXIT_USAGE = 2;
export const OPT_LEVELS = ['disabled', 'basic', 'extended', 'all'];

// A mistake on the command line; the message says what it is.
export class UsageError extends Error {}

const DIM_RULE = '--dim takes name=value with a non-negative integer value';

// [NAME, VALUE] of a --dim argument NAME=VALUE; throws a UsageError.
export function parseDim(text) {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`${DIM_RULE}, got '${text}'`);
  const name = text.slice(0, eq), value = text.slice(eq + 1);
  if (/^-\d+$/.test(value)) throw new UsageError(`${DIM_RULE}, got '${text}': a dimension cannot be negative`);
  if (!/^\d+$/.test(value)) throw new UsageError(`${DIM_RULE}, got '${text}': '${value}' is not an integer`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${DIM_RULE}, got '${text}': ${value} is above 2^53 - 1`);
  return [name, n];
}

// Adds a --dim argument to the map of bindings; a name is bound once.
export function bindDim(dims, text) {
  const [name, n] = parseDim(text);
  if (dims.has(name)) {
    throw new UsageError(`--dim ${text}: '${name}' is already bound to ${dims.get(name)}; give each name once`);
  }
  dims.set(name, n);
}

// The value of --seed: an integer in [0, 2^32).
export function parseSeed(text) {
  if (!/^\d+$/.test(text) || Number(text) > 0xffffffff) {
    throw new UsageError(`--seed takes an integer in [0, 2^32), got '${text}'`);
  }
  return Number(text);
}

// The value of OPTION when it takes a positive integer.
export function parsePositive(option, text) {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < 1) {
    throw new UsageError(`${option} takes a positive integer, got '${text}'`);
  }
  return Number(text);
}

// The value of OPTION when it takes on or off, as a boolean.
export function parseOnOff(option, text) {
  if (text !== 'on' && text !== 'off') throw new UsageError(`${option} takes on or off, got '${text}'`);
  return text === 'on';
}

// The value of --opt: one of OPT_LEVELS.
export function parseOptLevel(text) {
  if (!OPT_LEVELS.includes(text)) throw new UsageError(`--opt takes one of ${OPT_LEVELS.join(', ')}, got '${text}'`);
  return text;
}

// The shared options, each a function (value, options) that stores its value
// in options (dims a Map) or throws a UsageError. A tool picks those it has.
export const SHARED = {
  '--dim': (v, o) => bindDim(o.dims, v),
  '--seed': (v, o) => { o.seed = parseSeed(v); },
  '--opt': (v, o) => { o.opt = parseOptLevel(v); },
  '--arena': (v, o) => { o.arena = parseOnOff('--arena', v); },
  '--pattern': (v, o) => { o.pattern = parseOnOff('--pattern', v); },
  '--threads': (v, o) => { o.threads = parsePositive('--threads', v); },
  '--runs': (v, o) => { o.runs = parsePositive('--runs', v); },
};

// The entries of SHARED named, as an object to spread into a tool's table.
export function shared(...names) {
  return Object.fromEntries(names.map((n) => {
    if (!SHARED[n]) throw new Error(`options.mjs: no shared option ${n}`);
    return [n, SHARED[n]];
  }));
}

// Reads argv into options: an option of `values` takes the next argument
// (its function stores it or throws a UsageError), an option of `flags`
// takes none (its function is given options); -h and --help throw an empty
// UsageError; any other argument starting with -- is unknown. Returns the
// other arguments (the models), in order.
export function parseOptions(argv, options, values, flags = {}) {
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (Object.hasOwn(values, a)) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      values[a](argv[++i], options);
    } else if (Object.hasOwn(flags, a)) {
      flags[a](options);
    } else if (a === '-h' || a === '--help') {
      throw new UsageError('');
    } else if (a.startsWith('--')) {
      throw new UsageError(`unknown option '${a}'`);
    } else {
      rest.push(a);
    }
  }
  return rest;
}

// Throws a UsageError unless every path names a file.
export function checkModels(paths) {
  for (const p of paths) {
    if (!fs.existsSync(p) || !fs.statSync(p).isFile()) {
      throw new UsageError(`cannot open '${p}': no such file; give the path of an .onnx model`);
    }
  }
}

// Prints a usage error as TOOL: message, then the usage line; exits 2.
export function usageExit(tool, usageLine, message) {
  if (message) console.error(`${tool}: ${message}`);
  console.error(`usage: ${usageLine}`);
  process.exit(EXIT_USAGE);
}

// Runs parse() and returns what it returns; a UsageError it throws exits 2
// (usageExit).
export function parseOrExit(tool, usageLine, parse) {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return usageExit(tool, usageLine, e.message);
  }
}
