// The cases of tests/ort/options.mjs, the option rules the ONNX Runtime tools
// share: --dim's values (0 accepted, negative and non-integer values refused
// with their reason, a name bound once), the other options' ranges, the loop
// (values, flags, unknown options, models in order) and the model check.
// Run by tests/cli/test_ort_options.sh:
//
//   node --test tests/ort/options.test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import {
  parseDim, bindDim, parseSeed, parsePositive, parseOnOff, parseOptLevel, parseOptions, shared, checkModels,
  UsageError, OPT_LEVELS,
} from './options.mjs';
import { makeRandom } from './random.mjs';

// a fixed seed: the same varied cases on every run
const rand = makeRandom(27);
const randInt = (n) => Math.floor(rand() * n);
const NAME_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/ -';
function randomName() {
  let s = '';
  for (let k = 1 + randInt(12); k > 0; k--) s += NAME_CHARS[randInt(NAME_CHARS.length)];
  return s;
}

// The UsageError message fn() throws (fails if it throws nothing or another error).
function usageMessage(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof UsageError, `not a UsageError: ${e}`);
    return e.message;
  }
  assert.fail('no UsageError thrown');
}

test('--dim accepts 0 and every non-negative integer up to 2^53 - 1', () => {
  assert.deepEqual(parseDim('batch=0'), ['batch', 0]);
  assert.deepEqual(parseDim('batch=32'), ['batch', 32]);
  assert.deepEqual(parseDim('seq=007'), ['seq', 7]);
  assert.deepEqual(parseDim('n=9007199254740991'), ['n', 9007199254740991]);
  for (let k = 0; k < 500; k++) {
    const name = randomName();
    const value = k % 5 === 0 ? 0 : randInt(10 ** (1 + randInt(9)));
    assert.deepEqual(parseDim(`${name}=${value}`), [name, value]);
  }
});

test('--dim refuses a negative value and says so', () => {
  for (let k = 0; k < 200; k++) {
    const text = `${randomName()}=-${1 + randInt(1e6)}`;
    const msg = usageMessage(() => parseDim(text));
    assert.match(msg, /^--dim takes name=value with a non-negative integer value, got '.*': a dimension cannot be negative$/);
    assert.ok(msg.includes(`'${text}'`), msg);
  }
  assert.match(usageMessage(() => parseDim('batch=-0')), /cannot be negative/);
});

test('--dim refuses a value that is not an integer and names it', () => {
  const values = ['1.5', '2.0', '1e3', '+3', ' 3', '3 ', 'abc', '', '0x10', '-1.5', 'Infinity', 'NaN', '3=4', '١٢'];
  for (let k = 0; k < 200; k++) values.push(`${randInt(1000)}.${1 + randInt(999)}`);
  for (const v of values) {
    const msg = usageMessage(() => parseDim(`batch=${v}`));
    assert.equal(msg, `--dim takes name=value with a non-negative integer value, got 'batch=${v}': '${v}' is not an integer`);
  }
});

test('--dim refuses a value above 2^53 - 1, a missing name and a missing =', () => {
  assert.match(usageMessage(() => parseDim('n=9007199254740992')), /9007199254740992 is above 2\^53 - 1$/);
  assert.match(usageMessage(() => parseDim('n=123456789012345678901234567890')), /is above 2\^53 - 1$/);
  for (const text of ['batch', '=3', '', '=']) {
    assert.equal(usageMessage(() => parseDim(text)),
      `--dim takes name=value with a non-negative integer value, got '${text}'`);
  }
});

test('--dim binds a name once', () => {
  const dims = new Map();
  const names = [...new Set(Array.from({ length: 50 }, randomName))];
  names.forEach((n, i) => bindDim(dims, `${n}=${i}`));
  assert.equal(dims.size, names.length);
  names.forEach((n, i) => assert.equal(dims.get(n), i));
  const n = names[randInt(names.length)];
  assert.equal(usageMessage(() => bindDim(dims, `${n}=${names.length + 1}`)),
    `--dim ${n}=${names.length + 1}: '${n}' is already bound to ${dims.get(n)}; give each name once`);
  assert.match(usageMessage(() => bindDim(dims, `${n}=${dims.get(n)}`)), /already bound/);
});

test('--seed, --threads, --runs, --arena, --pattern and --opt keep their ranges', () => {
  assert.equal(parseSeed('0'), 0);
  assert.equal(parseSeed('4294967295'), 4294967295);
  for (let k = 0; k < 100; k++) {
    const s = randInt(4294967296);
    assert.equal(parseSeed(String(s)), s);
  }
  for (const v of ['4294967296', '-1', '1.5', 'x', '']) {
    assert.equal(usageMessage(() => parseSeed(v)), `--seed takes an integer in [0, 2^32), got '${v}'`);
  }
  assert.equal(parsePositive('--threads', '1'), 1);
  assert.equal(parsePositive('--threads', '64'), 64);
  for (const v of ['0', '-2', '1.5', '']) {
    assert.equal(usageMessage(() => parsePositive('--threads', v)), `--threads takes a positive integer, got '${v}'`);
  }
  const o = {};
  shared('--runs')['--runs']('3', o);
  assert.equal(o.runs, 3);
  assert.equal(usageMessage(() => shared('--runs')['--runs']('0', o)), "--runs takes a positive integer, got '0'");
  shared('--pattern')['--pattern']('on', o);
  assert.equal(o.pattern, true);
  assert.equal(usageMessage(() => shared('--pattern')['--pattern']('1', o)), "--pattern takes on or off, got '1'");
  assert.equal(parseOnOff('--arena', 'on'), true);
  assert.equal(parseOnOff('--arena', 'off'), false);
  assert.equal(usageMessage(() => parseOnOff('--arena', 'yes')), "--arena takes on or off, got 'yes'");
  for (const level of OPT_LEVELS) assert.equal(parseOptLevel(level), level);
  assert.match(usageMessage(() => parseOptLevel('fast')), /^--opt takes one of disabled, basic, extended, all, got 'fast'$/);
});

test('the loop: values, flags, models in order, unknown options and help', () => {
  for (let k = 0; k < 100; k++) {
    // a random command line: models, --dim bindings, a seed, a flag, in random order
    const models = Array.from({ length: 1 + randInt(3) }, (_, i) => `m${k}_${i}.onnx`);
    const dims = new Map(Array.from({ length: randInt(4) }, (_, i) => [`d${i}`, randInt(100)]));
    const pieces = [...models.map((m) => [m]), ...[...dims].map(([n, v]) => ['--dim', `${n}=${v}`])];
    const seed = randInt(1000);
    pieces.push(['--seed', String(seed)]);
    if (k % 2) pieces.push(['--order']);
    for (let i = pieces.length - 1; i > 0; i--) {
      const j = randInt(i + 1);
      [pieces[i], pieces[j]] = [pieces[j], pieces[i]];
    }
    const o = { dims: new Map(), seed: 1, order: false };
    const rest = parseOptions(pieces.flat(), o, shared('--dim', '--seed'), { '--order': (x) => { x.order = true; } });
    const order = pieces.flat().filter((a) => a.endsWith('.onnx'));
    assert.deepEqual(rest, order);
    assert.deepEqual(new Set(rest), new Set(models));
    assert.deepEqual(o.dims, dims);
    assert.equal(o.seed, seed);
    assert.equal(o.order, k % 2 === 1);
  }
  const o = { dims: new Map() };
  const values = shared('--dim');
  assert.equal(usageMessage(() => parseOptions(['a.onnx', '--dim'], o, values)), '--dim needs a value');
  assert.equal(usageMessage(() => parseOptions(['--dims', 'b=1'], o, values)), "unknown option '--dims'");
  assert.equal(usageMessage(() => parseOptions(['--order'], o, values)), "unknown option '--order'");
  assert.equal(usageMessage(() => parseOptions(['a.onnx', '-h'], o, values)), '');
  assert.equal(usageMessage(() => parseOptions(['--help'], o, values)), '');
  assert.match(usageMessage(() => parseOptions(['--dim', 'b=-3'], o, values)), /cannot be negative/);
  // a value that looks like an option is still the option's value
  assert.deepEqual(parseOptions(['--seed', '5', 'x.onnx'], { seed: 1 }, shared('--seed')), ['x.onnx']);
  assert.throws(() => shared('--nope'), /no shared option --nope/);
});

test('models must be files', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'olla-options-'));
  try {
    const file = path.join(dir, 'm.onnx');
    fs.writeFileSync(file, 'x');
    checkModels([file]);
    checkModels([]);
    for (const p of [path.join(dir, 'none.onnx'), dir]) {
      assert.equal(usageMessage(() => checkModels([file, p])),
        `cannot open '${p}': no such file; give the path of an .onnx model`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
