#!/usr/bin/python3
"""Writes a synthetic training step as an ONNX model of about N nodes.

    /usr/bin/python3 bench/huge_gen.py NODES out.onnx [--seed S]

The graph is shaped like a real training step: a forward chain of
MatMul+Add+Relu layers whose width alternates between an expansion and a
projection, with residual branches every second layer; a mean-squared loss;
the backward chain (masks, weight and input gradients, residual gradients
added back); and an SGD update of every weight and bias. Parameters and the
target are graph inputs (no weights stored), so the file stays small. Every
shape follows from the inputs by standard ONNX shape rules (opset 17). The
node list is written in a valid but memory-hungry order: all of the forward
pass, then all of the backward pass, then every update at the end.
"""
import argparse
import random

from onnx import TensorProto as T, helper as h

NODES_PER_LAYER = 16  # forward 3 (+1 residual on odd layers), backward 8 (+1 residual), updates 4


def build(target_nodes, seed):
    rnd = random.Random(seed)
    layers = max(2, target_nodes // NODES_PER_LAYER)
    batch = 16
    base = 64
    widths = [base]
    for i in range(layers):
        widths.append(base * rnd.choice([2, 4]) if i % 2 == 0 else base)
    fwd, bwd, upd = [], [], []
    inputs, outputs, inits = [], [], []
    vi = h.make_tensor_value_info
    inputs.append(vi('x', T.FLOAT, [batch, base]))
    inputs.append(vi('target', T.FLOAT, [batch, widths[-1]]))
    inits.append(h.make_tensor('lr', T.FLOAT, [], [0.01]))
    inits.append(h.make_tensor('zero', T.FLOAT, [], [0.0]))
    inits.append(h.make_tensor('axes0', T.INT64, [1], [0]))
    hs, pres = ['x'], []
    for i in range(layers):
        w, b = f'W{i}', f'b{i}'
        inputs.append(vi(w, T.FLOAT, [widths[i], widths[i + 1]]))
        inputs.append(vi(b, T.FLOAT, [widths[i + 1]]))
        fwd.append(h.make_node('MatMul', [hs[-1], w], [f'mm{i}'], name=f'fwd_mm{i}'))
        fwd.append(h.make_node('Add', [f'mm{i}', b], [f'pre{i}'], name=f'fwd_add{i}'))
        out = f'h{i + 1}'
        if i % 2 == 1 and widths[i + 1] == widths[i - 1]:  # residual over two layers
            fwd.append(h.make_node('Relu', [f'pre{i}'], [f'act{i}'], name=f'fwd_relu{i}'))
            fwd.append(h.make_node('Add', [f'act{i}', hs[-2]], [out], name=f'fwd_res{i}'))
        else:
            fwd.append(h.make_node('Relu', [f'pre{i}'], [out], name=f'fwd_relu{i}'))
        hs.append(out)
        pres.append(f'pre{i}')
    fwd.append(h.make_node('Sub', [hs[-1], 'target'], ['diff'], name='loss_sub'))
    fwd.append(h.make_node('Mul', ['diff', 'diff'], ['sq'], name='loss_sq'))
    fwd.append(h.make_node('ReduceMean', ['sq'], ['loss'], name='loss_mean', keepdims=0))
    outputs.append(vi('loss', T.FLOAT, []))
    bwd.append(h.make_node('Add', ['diff', 'diff'], [f'g{layers}'], name='loss_grad'))
    res_grad = {}
    for i in reversed(range(layers)):
        g = f'g{i + 1}'
        if (i + 1) in res_grad:  # a residual branch adds its gradient here
            bwd.append(h.make_node('Add', [g, res_grad.pop(i + 1)], [f'gs{i + 1}'], name=f'bwd_resadd{i}'))
            g = f'gs{i + 1}'
        if i % 2 == 1 and widths[i + 1] == widths[i - 1]:
            res_grad[i - 1] = g
        bwd.append(h.make_node('Greater', [pres[i], 'zero'], [f'mask{i}'], name=f'bwd_gt{i}'))
        bwd.append(h.make_node('Cast', [f'mask{i}'], [f'maskf{i}'], name=f'bwd_cast{i}', to=T.FLOAT))
        bwd.append(h.make_node('Mul', [g, f'maskf{i}'], [f'gp{i}'], name=f'bwd_mask{i}'))
        bwd.append(h.make_node('Transpose', [hs[i]], [f'hT{i}'], name=f'bwd_tr{i}', perm=[1, 0]))
        bwd.append(h.make_node('MatMul', [f'hT{i}', f'gp{i}'], [f'dW{i}'], name=f'bwd_dw{i}'))
        bwd.append(h.make_node('ReduceSum', [f'gp{i}', 'axes0'], [f'db{i}'], name=f'bwd_db{i}', keepdims=0))
        if i > 0:
            bwd.append(h.make_node('Transpose', [f'W{i}'], [f'WT{i}'], name=f'bwd_wt{i}', perm=[1, 0]))
            bwd.append(h.make_node('MatMul', [f'gp{i}', f'WT{i}'], [f'g{i}'], name=f'bwd_dx{i}'))
        upd.append(h.make_node('Mul', ['lr', f'dW{i}'], [f'sW{i}'], name=f'upd_sw{i}'))
        upd.append(h.make_node('Sub', [f'W{i}', f'sW{i}'], [f'W{i}_new'], name=f'upd_w{i}'))
        upd.append(h.make_node('Mul', ['lr', f'db{i}'], [f'sb{i}'], name=f'upd_sb{i}'))
        upd.append(h.make_node('Sub', [f'b{i}', f'sb{i}'], [f'b{i}_new'], name=f'upd_b{i}'))
        outputs.append(vi(f'W{i}_new', T.FLOAT, [widths[i], widths[i + 1]]))
        outputs.append(vi(f'b{i}_new', T.FLOAT, [widths[i + 1]]))
    graph = h.make_graph(fwd + bwd + upd, 'huge_train_step', inputs, outputs, initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 17)], producer_name='olla-onnx bench/huge_gen.py')
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('nodes', type=int)
    ap.add_argument('out')
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    m = build(a.nodes, a.seed)
    with open(a.out, 'wb') as f:
        f.write(m.SerializeToString())
    print(f'{a.out}: {len(m.graph.node)} nodes, {len(m.graph.input)} inputs')


if __name__ == '__main__':
    main()
