// Prints the names of the symbolic dimensions of a model's inputs, one per
// line, as ONNX Runtime reads them (tests/cli/test_ort.sh binds each with
// --dim). Exit 0; 77 when ONNX Runtime cannot load the model.
//
//   node tests/ort/dims.mjs model.onnx
import ort from 'onnxruntime-node';

const path = process.argv[2];
if (!path || process.argv.length !== 3) {
  console.error('usage: node tests/ort/dims.mjs model.onnx');
  process.exit(2);
}
try {
  const s = await ort.InferenceSession.create(path, { logSeverityLevel: 3 });
  const names = new Set();
  for (const m of s.inputMetadata) {
    for (const d of m.shape || []) if (typeof d === 'string' && d !== '') names.add(d);
  }
  for (const n of [...names].sort()) console.log(n);
  await s.release();
} catch (e) {
  console.error(`dims.mjs: ONNX Runtime cannot load ${path}: ${String(e.message || e).split('\n')[0]}`);
  process.exit(77);
}
