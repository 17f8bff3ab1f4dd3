// ONNX Runtime's training WebAssembly build (onnxruntime-web 1.18.0,
// `onnxruntime-web/training`) loaded in Node, with an exact heap figure, and a
// reader for the parts of an .onnx file the harness needs. Used by
// train_run.mjs (tests/ort/README.md, "Running training graphs").
//
// Loading (../shared/notes/ORT_TRAINING.md): the bundle replaces `fs` and
// `path` with empty stubs, so in Node it aborts when it reads its .wasm. The
// bundle's text is read and patched in memory, never on disk, by exact string
// replacements, each of which must match exactly once (else the load fails,
// naming the string: another version of the package needs a new look):
//   1. the stubbed `fs`/`path` become Node's own modules;
//   2. the WebAssembly module object, and its heap's size at that moment, are
//      handed to this file when it resolves, so that its heap (`HEAP8.buffer`)
//      can be read;
//   3. the heap-resize import (emscripten_resize_heap) grows the heap to
//      exactly the size asked, rounded up to the 64 KiB page, instead of up to
//      20% (or 96 MiB) more: the heap's byte length after a run is then the
//      exact high-water mark of the run's allocations (the heap never shrinks),
//      the same in every process.
// The patched text is evaluated as a CommonJS module with a `require` rooted
// at the package's own file.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';

export const ORT_WEB_VERSION = '1.18.0';
const MODULE_HANDLE = '__ollaOrtTrainingWasm';

// [what it fixes, exact text in 1.18.0, replacement]
const PATCHES = [
  ['fs and path are stubs in the bundle',
    'var S=(Er(),Ke(_r)),R=(Ar(),Ke(Sr));', 'var S=require("fs"),R=require("path");'],
  ['the WebAssembly module is not reachable',
    'C(S).then(R=>{', `C(S).then(R=>{globalThis.${MODULE_HANDLE}={module:R,startBytes:R.HEAP8.buffer.byteLength};`],
  ['the heap grows by up to 20% more than asked',
    'var b=d*(1+.2/p);', 'var b=o;'],
];

export class HarnessError extends Error {}

// Returns { ort, bundle, heapBytes() } after the WebAssembly module is ready.
export async function loadOrtTraining() {
  const req = createRequire(import.meta.url);
  let bundle;
  try {
    bundle = req.resolve('onnxruntime-web/training');
  } catch (e) {
    throw new HarnessError('onnxruntime-web is not installed in tests/ort/node_modules; run scripts/setup_ort.sh');
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(bundle), '..', '..', 'package.json'), 'utf8'));
  if (pkg.version !== ORT_WEB_VERSION) {
    throw new HarnessError(`onnxruntime-web ${pkg.version} is installed, the harness is made for ${ORT_WEB_VERSION}; ` +
      'run scripts/setup_ort.sh');
  }
  // OLLA_ORT_TRAINING_BUNDLE names another copy of the bundle to patch (the
  // test of the patching itself); the package's own .wasm files are used.
  const source = process.env.OLLA_ORT_TRAINING_BUNDLE || bundle;
  let text;
  try {
    text = fs.readFileSync(source, 'utf8');
  } catch (e) {
    throw new HarnessError(`cannot read the runtime's bundle ${source}: ${firstLine(e)}`);
  }
  for (const [why, from, to] of PATCHES) {
    const count = text.split(from).length - 1;
    if (count !== 1) {
      throw new HarnessError(`${source}: the text '${from}' (patched because ${why}) occurs ${count} times, ` +
        'expected exactly once; the bundle is not the one the harness knows');
    }
    text = text.replace(from, () => to);
  }
  const module = { exports: {} };
  const wrapper = vm.runInThisContext(
    `(function (exports, require, module, __filename, __dirname) {${text}\n})`, { filename: bundle });
  wrapper(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
  const ort = module.exports;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.wasm.wasmPaths = path.join(path.dirname(bundle), '..') + path.sep;
  ort.env.logLevel = 'error';
  return {
    ort,
    bundle,
    // The heap's byte length now; throws before the module is initialized
    // (the first InferenceSession.create initializes it).
    heapBytes() {
      const h = globalThis[MODULE_HANDLE];
      if (!h) throw new HarnessError('the WebAssembly module is not initialized');
      return h.module.HEAP8.buffer.byteLength;
    },
    // The heap's byte length when the module was instantiated.
    heapStartBytes() {
      const h = globalThis[MODULE_HANDLE];
      if (!h) throw new HarnessError('the WebAssembly module is not initialized');
      return h.startBytes;
    },
  };
}

// ---------------------------------------------------------------------------
// A reader for the ONNX protobuf: graph inputs (with element type and dims),
// outputs, initializer names, nodes (op type, domain, name) and opsets.

export const ELEM_TYPES = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64',
};

class Reader {
  constructor(buf, start = 0, end = buf.length) {
    this.buf = buf; this.pos = start; this.end = end;
  }
  varint() {
    let value = 0, scale = 1;
    for (;;) {
      if (this.pos >= this.end) throw new HarnessError('truncated varint');
      const b = this.buf[this.pos++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
  }
  // Calls fn(fieldNumber, wireType, reader) for each field; for
  // length-delimited fields reader is a sub-reader over the field's bytes,
  // for varints reader.value is the number.
  each(fn) {
    while (this.pos < this.end) {
      const key = this.varint();
      const no = Math.floor(key / 8), wt = key % 8;
      if (wt === 0) {
        fn(no, wt, { value: this.varint() });
      } else if (wt === 2) {
        const len = this.varint();
        if (this.pos + len > this.end) throw new HarnessError(`field ${no} runs past its message`);
        fn(no, wt, new Reader(this.buf, this.pos, this.pos + len));
        this.pos += len;
      } else if (wt === 1) {
        this.pos += 8;
      } else if (wt === 5) {
        this.pos += 4;
      } else {
        throw new HarnessError(`unsupported protobuf wire type ${wt}`);
      }
    }
  }
  string() {
    return this.buf.toString('utf8', this.pos, this.end);
  }
}

function readDim(r) {
  let dim = null;
  r.each((no, wt, f) => {
    if (no === 1 && wt === 0) dim = f.value;
    else if (no === 2 && wt === 2) dim = f.string();
  });
  return dim;
}

function readValueInfo(r) {
  const v = { name: '', kind: 'none', elemType: 0, dims: null };
  r.each((no, wt, f) => {
    if (no === 1 && wt === 2) v.name = f.string();
    if (no !== 2 || wt !== 2) return;
    f.each((tno, twt, t) => {
      if (twt !== 2) return;
      if (tno !== 1) { v.kind = { 4: 'sequence', 5: 'map', 8: 'sparse tensor', 9: 'optional' }[tno] || 'other'; return; }
      v.kind = 'tensor';
      t.each((kno, kwt, k) => {
        if (kno === 1 && kwt === 0) v.elemType = k.value;
        if (kno === 2 && kwt === 2) {
          v.dims = [];
          k.each((dno, dwt, d) => { if (dno === 1 && dwt === 2) v.dims.push(readDim(d)); });
        }
      });
    });
  });
  v.type = ELEM_TYPES[v.elemType] || `type ${v.elemType}`;
  return v;
}

function readNode(r) {
  const n = { opType: '', domain: '', name: '', inputs: [], outputs: [] };
  r.each((no, wt, f) => {
    if (wt !== 2) return;
    if (no === 1) n.inputs.push(f.string());
    else if (no === 2) n.outputs.push(f.string());
    else if (no === 3) n.name = f.string();
    else if (no === 4) n.opType = f.string();
    else if (no === 7) n.domain = f.string();
  });
  return n;
}

// Returns { inputs, outputs, initializers (Set), nodes, opsets }.
export function readModel(bytes) {
  const model = { inputs: [], outputs: [], initializers: new Set(), nodes: [], opsets: [] };
  let graphs = 0;
  new Reader(bytes).each((no, wt, f) => {
    if (no === 8 && wt === 2) {
      const o = { domain: '', version: 0 };
      f.each((ono, owt, x) => {
        if (ono === 1 && owt === 2) o.domain = x.string();
        if (ono === 2 && owt === 0) o.version = x.value;
      });
      model.opsets.push(o);
    }
    if (no !== 7 || wt !== 2) return;
    graphs++;
    f.each((gno, gwt, g) => {
      if (gwt !== 2) return;
      if (gno === 1) model.nodes.push(readNode(g));
      else if (gno === 11) model.inputs.push(readValueInfo(g));
      else if (gno === 12) model.outputs.push(readValueInfo(g));
      else if (gno === 5 || gno === 15) {
        g.each((tno, twt, t) => {
          // TensorProto.name is 8; SparseTensorProto.values (1) holds the name.
          if (gno === 5 && tno === 8 && twt === 2) model.initializers.add(t.string());
          if (gno === 15 && tno === 1 && twt === 2) {
            t.each((sno, swt, s) => { if (sno === 8 && swt === 2) model.initializers.add(s.string()); });
          }
        });
      }
    });
  });
  if (graphs === 0) throw new HarnessError('no graph in the file: not an ONNX model');
  return model;
}

// The first line of an error's message (ORT's messages carry a stack).
export function firstLine(e) {
  return String(e && e.message ? e.message : e).split('\n')[0].trim();
}
