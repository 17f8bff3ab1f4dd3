"""Writes a synthetic model of N nodes: a chain of Relu/Add with skip
connections every few nodes, every tensor with a value_info.

Usage: make_chain_model.py N out.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper

n, out = int(sys.argv[1]), sys.argv[2]
nodes, infos = [], []
prev, skip = "x", "x"
for i in range(n):
    name = f"t{i}"
    width = 64 * (1 + i % 7)
    if i % 5 == 4:
        nodes.append(helper.make_node("Add", [prev, skip], [name], name=f"add{i}"))
        width = 64 * (1 + (i - 1) % 7)
        skip = name
    else:
        nodes.append(helper.make_node("Relu", [prev], [name], name=f"relu{i}"))
    prev = name
    infos.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [16, 64]))
graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [16, 64])], value_info=infos[:-1])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out)
