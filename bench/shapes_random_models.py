#!/usr/bin/python3
# Writes random single-node models of the convolution, pooling, recurrent,
# resize, normalization and signal operators, each declaring the output types
# that onnx.shape_inference (the installed onnx package) infers, so that
# bench/shapes_node_bench can compare olla's inference with ONNX's own.
# Usage: /usr/bin/python3 bench/shapes_random_models.py <out dir>
import onnx, random, os, sys
from onnx import helper, TensorProto, numpy_helper
import numpy as np
random.seed(1)
out=sys.argv[1]
def mk(name, op, inputs, attrs, nout, opset, inits={}):
    nodes=[helper.make_node(op, [i[0] for i in inputs], ['y%d'%k if k>=0 else '' for k in range(nout)], **attrs)]
    ginputs=[helper.make_tensor_value_info(n,t,s) for n,t,s in inputs if n and n not in inits]
    inits_l=[numpy_helper.from_array(v,name=k) for k,v in inits.items()]
    g=helper.make_graph(nodes,name,ginputs,[helper.make_tensor_value_info('y%d'%k, TensorProto.UNDEFINED, None) for k in range(nout)], inits_l)
    m=helper.make_model(g, opset_imports=[helper.make_opsetid('',opset)])
    m.ir_version=8
    try:
        inf=onnx.shape_inference.infer_shapes(m, strict_mode=True)
    except Exception:
        return  # ONNX rejects the node: nothing to compare
    vi={v.name:v for v in list(inf.graph.value_info)+list(inf.graph.output)}
    g2=helper.make_graph(nodes,name,ginputs,[vi['y%d'%k] for k in range(nout)], inits_l)
    m2=helper.make_model(g2, opset_imports=[helper.make_opsetid('',opset)]); m2.ir_version=8
    os.makedirs('%s/%s'%(out,name),exist_ok=True)
    onnx.save(m2,'%s/%s/model.onnx'%(out,name))
F=TensorProto.FLOAT
for opset in [7,9,10,11,13,17]:
  for op in ['MaxPool','AveragePool','LpPool','Conv','ConvTranspose']:
    for trial in range(25):
        nsp=random.choice([1,2,3])
        sp=[random.randint(5,12) for _ in range(nsp)]
        k=[random.randint(1,4) for _ in range(nsp)]
        s=[random.randint(1,3) for _ in range(nsp)]
        d=[random.randint(1,2) for _ in range(nsp)]
        p=[random.randint(0,min(k)-1) for _ in range(2*nsp)]
        attrs={'kernel_shape':k}
        if random.random()<0.7: attrs['strides']=s
        ap=random.choice(['NOTSET','NOTSET','VALID','SAME_UPPER','SAME_LOWER'])
        if ap!='NOTSET': attrs['auto_pad']=ap
        elif random.random()<0.6: attrs['pads']=p
        if op in ('Conv','ConvTranspose') or (op=='MaxPool' and opset>=10):
            if random.random()<0.5: attrs['dilations']=d
        if op in ('MaxPool','AveragePool') and opset>=10 and random.random()<0.5: attrs['ceil_mode']=1
        if op=='LpPool': attrs['p']=2
        C=4
        ins=[('x',F,[2,C]+sp)]
        nout=1
        if op=='Conv':
            ins.append(('w',F,[6,C]+k))
        if op=='ConvTranspose':
            ins.append(('w',F,[C,3]+k))
            if random.random()<0.3: attrs['output_padding']=[random.randint(0,1) for _ in range(nsp)]
            if ap!='NOTSET' and 'strides' not in attrs: attrs['strides']=s
        if op=='MaxPool' and opset>=8 and random.random()<0.3: nout=2
        mk('%s_%d_%d'%(op,opset,trial),op,ins,attrs,nout,opset)
# LSTM/GRU/RNN
for opset in [7,14]:
  for op,g in [('RNN',1),('GRU',3),('LSTM',4)]:
    for trial in range(6):
        h=random.randint(2,6); dirs=random.choice(['forward','bidirectional']); nd=2 if dirs=='bidirectional' else 1
        attrs={'hidden_size':h,'direction':dirs}
        layout=0
        if opset>=14 and random.random()<0.5: attrs['layout']=1; layout=1
        T,B,I=random.randint(1,5),random.randint(1,4),random.randint(1,5)
        X=[T,B,I] if layout==0 else [B,T,I]
        ins=[('x',F,X),('w',F,[nd,g*h,I]),('r',F,[nd,g*h,h])]
        mk('%s_%d_%d'%(op,opset,trial),op,ins,attrs,3 if op=='LSTM' else 2,opset)
# Resize/Upsample with constant scales/sizes
for opset in [10,11,13]:
    for trial in range(8):
        shp=[1,3,random.randint(3,9),random.randint(3,9)]
        sc=np.array([1,1,random.choice([0.5,0.75,1.5,2,3,0.6]),random.choice([0.5,2,2.5,1.3])],dtype=np.float32)
        if opset==10:
            mk('Resize_%d_%d'%(opset,trial),'Resize',[('x',F,shp),('s',F,[4])],{},1,opset,{'s':sc})
        else:
            if trial%2:
                mk('Resize_%d_%d'%(opset,trial),'Resize',[('x',F,shp),('r',F,[0]),('s',F,[4])],{},1,opset,{'s':sc,'r':np.zeros(0,np.float32)})
            else:
                sz=np.array([1,3,random.randint(2,20),random.randint(2,20)],dtype=np.int64)
                mk('Resize_%d_%d'%(opset,trial),'Resize',[('x',F,shp),('r',F,[0]),('s',F,[0]),('z',TensorProto.INT64,[4])],{},1,opset,{'z':sz,'r':np.zeros(0,np.float32),'s':np.zeros(0,np.float32)})
for opset in [9]:
    for trial in range(4):
        sc=np.array([1,1,random.choice([2,3,1.5]),2],dtype=np.float32)
        mk('Upsample_%d_%d'%(opset,trial),'Upsample',[('x',F,[1,2,5,7]),('s',F,[4])],{},1,opset,{'s':sc})
# TopK with constant k, BatchNorm, LayerNorm, InstanceNorm
for opset in [1,10,11]:
    if opset==1: mk('TopK_1','TopK',[('x',F,[3,7])],{'k':2},2,1)
    else: mk('TopK_%d'%opset,'TopK',[('x',F,[3,7,5]),('k',TensorProto.INT64,[1])],{'axis':1},2,opset,{'k':np.array([4],np.int64)})
for opset in [7,9,14,15]:
    attrs={'training_mode':1} if opset>=14 else {}
    mk('BN_%d'%opset,'BatchNormalization',[('x',F,[2,3,4,5]),('s',F,[3]),('b',F,[3]),('m',F,[3]),('v',F,[3])],attrs,3 if opset>=14 else 1,opset)
for ax in [-1,1,2]:
    mk('LN_%d'%ax,'LayerNormalization',[('x',F,[2,3,4,5]),('s',F,[5])],{'axis':ax},3,17)
mk('QL','QuantizeLinear',[('x',F,[2,3]),('s',F,[]),('z',TensorProto.INT8,[])],{},1,13)
mk('DQL','DequantizeLinear',[('x',TensorProto.INT8,[2,3]),('s',F,[]),],{},1,13)
mk('DFT17','DFT',[('x',F,[2,10,1])],{'onesided':1},1,17)
mk('STFT17','STFT',[('x',F,[2,64,1]),('st',TensorProto.INT64,[]),('w',F,[16])],{},1,17,{'st':np.array(8,np.int64)})
mk('Mel','MelWeightMatrix',[('a',TensorProto.INT64,[]),('b',TensorProto.INT64,[]),('c',TensorProto.INT64,[]),('d',F,[]),('e',F,[])],{},1,17,{'a':np.array(8,np.int64),'b':np.array(16,np.int64),'c':np.array(8000,np.int64),'d':np.array(0,np.float32),'e':np.array(4000,np.float32)})
mk('Hann','HannWindow',[('a',TensorProto.INT64,[])],{},1,17,{'a':np.array(12,np.int64)})
mk('RoiAlign','RoiAlign',[('x',F,[1,3,8,8]),('r',F,[5,4]),('b',TensorProto.INT64,[5])],{'output_height':3,'output_width':2},1,16)
mk('GridS','GridSample',[('x',F,[1,3,8,8]),('g',F,[1,5,6,2])],{},1,16)
mk('MaxUnpool','MaxUnpool',[('x',F,[1,3,4,4]),('i',TensorProto.INT64,[1,3,4,4])],{'kernel_shape':[3,3],'strides':[2,2],'pads':[1,1,0,0]},1,11)
