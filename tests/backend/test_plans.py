"""Convolution and pooling plans (paddle_hl/backend/plans.py): the algorithm each layer of the
zoo's networks runs is pinned, with and without the compiled kernels.

The pinned kinds were taken from the code before the choices moved into plans (its separate
``use_direct`` / ``use_nin`` / ``is_pointwise`` / ``is_depthwise`` / ``flat_ratio`` tests and
the NumPy backend's depthwise rules), run on each layer geometry of the models below; a change
here is a change of algorithm for a real network and must be measured. One such change since:
ResNet-50's inference 3x3 stride-1 layers on 14x14 and larger planes run as ``winograd`` with
the compiled transforms, and with NumPy's on one thread only (measured per layer in
``benchmarks/winograd_layers.py``). The pinned kinds are those of a 2-thread CPU pool.

Layer geometry strings: ``c CxHxW OxIxKhxKw s<stride> p<pads> [d<dil>] [g<groups>] [cl]`` (a
convolution; pads as lo,hi per dim when not all equal) or ``max|avg CxHxW k<ksize> s<stride>
p<applied padding> [cl]``. Kind strings: ``direct``, ``nin``, ``pointwise``, ``im2col``
(``-flat``: the input gradient's col2im on flat planes), ``winograd``,
``depthwise-cl|planes|blocked``, with
`` trim`` when taps that only read padding are dropped; ``max``, ``max-compiled``, ``avg``.
"""

from __future__ import annotations

import numpy as np
import pytest

from paddle_hl.backend import plans, settings

# model: (batch, training, [(layer, kind without compiled kernels, kind with them)])
PINNED = {
    'lenet_train': (64, True, [
        ('c 1x28x28 6x1x3x3 s1 p1', 'im2col-flat', 'direct'),
        ('max 6x28x28 k2 s2 p0', 'max', 'max-compiled'),
        ('c 6x14x14 16x6x5x5 s1 p0', 'nin', 'nin'),
        ('max 16x10x10 k2 s2 p0', 'max', 'max-compiled'),
    ]),
    'resnet18_cifar_train': (32, True, [
        ('c 3x32x32 64x3x7x7 s2 p3', 'nin', 'nin'),
        ('max 64x16x16 k3 s2 p1', 'max', 'max-compiled'),
        ('c 64x8x8 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x8x8 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x8x8 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x8x8 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x8x8 128x64x3x3 s2 p1', 'nin', 'nin'),
        ('c 128x4x4 128x128x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x8x8 128x64x1x1 s2 p0', 'im2col', 'im2col'),
        ('c 128x4x4 128x128x3x3 s1 p1', 'nin', 'nin'),
        ('c 128x4x4 128x128x3x3 s1 p1', 'nin', 'nin'),
        ('c 128x4x4 256x128x3x3 s2 p1', 'nin', 'nin'),
        ('c 256x2x2 256x256x3x3 s1 p1', 'nin', 'nin'),
        ('c 128x4x4 256x128x1x1 s2 p0', 'im2col', 'im2col'),
        ('c 256x2x2 256x256x3x3 s1 p1', 'nin', 'nin'),
        ('c 256x2x2 256x256x3x3 s1 p1', 'nin', 'nin'),
        ('c 256x2x2 512x256x3x3 s2 p1', 'nin trim', 'nin trim'),
        ('c 512x1x1 512x512x3x3 s1 p1', 'im2col-flat trim', 'im2col-flat trim'),
        ('c 256x2x2 512x256x1x1 s2 p0', 'im2col', 'im2col'),
        ('c 512x1x1 512x512x3x3 s1 p1', 'im2col-flat trim', 'im2col-flat trim'),
        ('c 512x1x1 512x512x3x3 s1 p1', 'im2col-flat trim', 'im2col-flat trim'),
    ]),
    'resnet18_224_train': (8, True, [
        ('c 3x224x224 64x3x7x7 s2 p3', 'nin', 'nin'),
        ('max 64x112x112 k3 s2 p1', 'max', 'max-compiled'),
        ('c 64x56x56 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x56x56 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x56x56 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x56x56 64x64x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x56x56 128x64x3x3 s2 p1', 'nin', 'nin'),
        ('c 128x28x28 128x128x3x3 s1 p1', 'nin', 'nin'),
        ('c 64x56x56 128x64x1x1 s2 p0', 'pointwise', 'pointwise'),
        ('c 128x28x28 128x128x3x3 s1 p1', 'nin', 'nin'),
        ('c 128x28x28 128x128x3x3 s1 p1', 'nin', 'nin'),
        ('c 128x28x28 256x128x3x3 s2 p1', 'nin', 'nin'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'nin'),
        ('c 128x28x28 256x128x1x1 s2 p0', 'pointwise', 'pointwise'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'nin'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'nin'),
        ('c 256x14x14 512x256x3x3 s2 p1', 'nin', 'nin'),
        ('c 512x7x7 512x512x3x3 s1 p1', 'nin', 'nin'),
        ('c 256x14x14 512x256x1x1 s2 p0', 'im2col', 'im2col'),
        ('c 512x7x7 512x512x3x3 s1 p1', 'nin', 'nin'),
        ('c 512x7x7 512x512x3x3 s1 p1', 'nin', 'nin'),
    ]),
    'resnet50_eval_b8': (8, False, [
        ('c 3x224x224 64x3x7x7 s2 p3', 'im2col', 'im2col'),
        ('max 64x112x112 k3 s2 p1', 'max', 'max-compiled'),
        ('c 64x56x56 64x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x56x56 64x64x3x3 s1 p1', 'im2col-flat', 'winograd'),
        ('c 64x56x56 256x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x56x56 256x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x56x56 64x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x56x56 64x64x3x3 s1 p1', 'im2col-flat', 'winograd'),
        ('c 64x56x56 256x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x56x56 64x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x56x56 64x64x3x3 s1 p1', 'im2col-flat', 'winograd'),
        ('c 64x56x56 256x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x56x56 128x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 128x56x56 128x128x3x3 s2 p1', 'im2col', 'im2col'),
        ('c 128x28x28 512x128x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x56x56 512x256x1x1 s2 p0', 'pointwise', 'pointwise'),
        ('c 512x28x28 128x512x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 128x28x28 128x128x3x3 s1 p1', 'im2col-flat', 'winograd'),
        ('c 128x28x28 512x128x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 512x28x28 128x512x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 128x28x28 128x128x3x3 s1 p1', 'im2col-flat', 'winograd'),
        ('c 128x28x28 512x128x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 512x28x28 128x512x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 128x28x28 128x128x3x3 s1 p1', 'im2col-flat', 'winograd'),
        ('c 128x28x28 512x128x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 512x28x28 256x512x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x28x28 256x256x3x3 s2 p1', 'im2col', 'im2col'),
        ('c 256x14x14 1024x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 512x28x28 1024x512x1x1 s2 p0', 'pointwise', 'pointwise'),
        ('c 1024x14x14 256x1024x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'winograd'),
        ('c 256x14x14 1024x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 1024x14x14 256x1024x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'winograd'),
        ('c 256x14x14 1024x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 1024x14x14 256x1024x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'winograd'),
        ('c 256x14x14 1024x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 1024x14x14 256x1024x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'winograd'),
        ('c 256x14x14 1024x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 1024x14x14 256x1024x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 256x14x14 256x256x3x3 s1 p1', 'nin', 'winograd'),
        ('c 256x14x14 1024x256x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 1024x14x14 512x1024x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 512x14x14 512x512x3x3 s2 p1', 'im2col', 'im2col'),
        ('c 512x7x7 2048x512x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 1024x14x14 2048x1024x1x1 s2 p0', 'im2col', 'im2col'),
        ('c 2048x7x7 512x2048x1x1 s1 p0', 'nin', 'nin'),
        ('c 512x7x7 512x512x3x3 s1 p1', 'nin', 'nin'),
        ('c 512x7x7 2048x512x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 2048x7x7 512x2048x1x1 s1 p0', 'nin', 'nin'),
        ('c 512x7x7 512x512x3x3 s1 p1', 'nin', 'nin'),
        ('c 512x7x7 2048x512x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
    ]),
    'mobilenetv2_train': (16, True, [
        ('c 3x64x64 32x3x3x3 s2 p1', 'im2col', 'im2col'),
        ('c 32x32x32 32x1x3x3 s1 p1 g32', 'depthwise-blocked', 'depthwise-planes'),
        ('c 32x32x32 16x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 16x32x32 96x16x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 96x32x32 96x1x3x3 s2 p1 g96', 'depthwise-blocked', 'depthwise-planes'),
        ('c 96x16x16 24x96x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 24x16x16 144x24x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 144x16x16 144x1x3x3 s1 p1 g144', 'depthwise-blocked', 'depthwise-planes'),
        ('c 144x16x16 24x144x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 24x16x16 144x24x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 144x16x16 144x1x3x3 s2 p1 g144', 'depthwise-blocked', 'depthwise-cl'),
        ('c 144x8x8 32x144x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 32x8x8 192x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 192x8x8 192x1x3x3 s1 p1 g192', 'depthwise-cl', 'depthwise-cl'),
        ('c 192x8x8 32x192x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 32x8x8 192x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 192x8x8 192x1x3x3 s1 p1 g192', 'depthwise-cl', 'depthwise-cl'),
        ('c 192x8x8 32x192x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 32x8x8 192x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 192x8x8 192x1x3x3 s2 p1 g192', 'depthwise-cl', 'depthwise-cl'),
        ('c 192x4x4 64x192x1x1 s1 p0', 'nin', 'nin'),
        ('c 64x4x4 384x64x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 384x4x4 384x1x3x3 s1 p1 g384', 'depthwise-cl', 'depthwise-cl'),
        ('c 384x4x4 64x384x1x1 s1 p0', 'nin', 'nin'),
        ('c 64x4x4 384x64x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 384x4x4 384x1x3x3 s1 p1 g384', 'depthwise-cl', 'depthwise-cl'),
        ('c 384x4x4 64x384x1x1 s1 p0', 'nin', 'nin'),
        ('c 64x4x4 384x64x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 384x4x4 384x1x3x3 s1 p1 g384', 'depthwise-cl', 'depthwise-cl'),
        ('c 384x4x4 64x384x1x1 s1 p0', 'nin', 'nin'),
        ('c 64x4x4 384x64x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 384x4x4 384x1x3x3 s1 p1 g384', 'depthwise-cl', 'depthwise-cl'),
        ('c 384x4x4 96x384x1x1 s1 p0', 'nin', 'nin'),
        ('c 96x4x4 576x96x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 576x4x4 576x1x3x3 s1 p1 g576', 'depthwise-cl', 'depthwise-cl'),
        ('c 576x4x4 96x576x1x1 s1 p0', 'nin', 'nin'),
        ('c 96x4x4 576x96x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 576x4x4 576x1x3x3 s1 p1 g576', 'depthwise-cl', 'depthwise-cl'),
        ('c 576x4x4 96x576x1x1 s1 p0', 'nin', 'nin'),
        ('c 96x4x4 576x96x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 576x4x4 576x1x3x3 s2 p1 g576', 'depthwise-cl', 'depthwise-cl'),
        ('c 576x2x2 160x576x1x1 s1 p0', 'nin', 'nin'),
        ('c 160x2x2 960x160x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 960x2x2 960x1x3x3 s1 p1 g960', 'depthwise-cl', 'depthwise-cl'),
        ('c 960x2x2 160x960x1x1 s1 p0', 'nin', 'nin'),
        ('c 160x2x2 960x160x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 960x2x2 960x1x3x3 s1 p1 g960', 'depthwise-cl', 'depthwise-cl'),
        ('c 960x2x2 160x960x1x1 s1 p0', 'nin', 'nin'),
        ('c 160x2x2 960x160x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 960x2x2 960x1x3x3 s1 p1 g960', 'depthwise-cl', 'depthwise-cl'),
        ('c 960x2x2 320x960x1x1 s1 p0', 'nin', 'nin'),
        ('c 320x2x2 1280x320x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
    ]),
    'mobilenetv2_eval': (8, False, [
        ('c 3x224x224 32x3x3x3 s2 p1', 'im2col', 'im2col'),
        ('c 32x112x112 32x1x3x3 s1 p1 g32', 'depthwise-blocked', 'depthwise-planes'),
        ('c 32x112x112 16x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 16x112x112 96x16x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 96x112x112 96x1x3x3 s2 p1 g96', 'depthwise-blocked', 'depthwise-planes'),
        ('c 96x56x56 24x96x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 24x56x56 144x24x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 144x56x56 144x1x3x3 s1 p1 g144', 'depthwise-blocked', 'depthwise-planes'),
        ('c 144x56x56 24x144x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 24x56x56 144x24x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 144x56x56 144x1x3x3 s2 p1 g144', 'depthwise-blocked', 'depthwise-planes'),
        ('c 144x28x28 32x144x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 32x28x28 192x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 192x28x28 192x1x3x3 s1 p1 g192', 'depthwise-blocked', 'depthwise-planes'),
        ('c 192x28x28 32x192x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 32x28x28 192x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 192x28x28 192x1x3x3 s1 p1 g192', 'depthwise-blocked', 'depthwise-planes'),
        ('c 192x28x28 32x192x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 32x28x28 192x32x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 192x28x28 192x1x3x3 s2 p1 g192', 'depthwise-blocked', 'depthwise-blocked'),
        ('c 192x14x14 64x192x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x14x14 384x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 384x14x14 384x1x3x3 s1 p1 g384', 'depthwise-blocked', 'depthwise-blocked'),
        ('c 384x14x14 64x384x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x14x14 384x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 384x14x14 384x1x3x3 s1 p1 g384', 'depthwise-blocked', 'depthwise-blocked'),
        ('c 384x14x14 64x384x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x14x14 384x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 384x14x14 384x1x3x3 s1 p1 g384', 'depthwise-blocked', 'depthwise-blocked'),
        ('c 384x14x14 64x384x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 64x14x14 384x64x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 384x14x14 384x1x3x3 s1 p1 g384', 'depthwise-blocked', 'depthwise-blocked'),
        ('c 384x14x14 96x384x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 96x14x14 576x96x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 576x14x14 576x1x3x3 s1 p1 g576', 'depthwise-blocked', 'depthwise-blocked'),
        ('c 576x14x14 96x576x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 96x14x14 576x96x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 576x14x14 576x1x3x3 s1 p1 g576', 'depthwise-blocked', 'depthwise-blocked'),
        ('c 576x14x14 96x576x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 96x14x14 576x96x1x1 s1 p0', 'pointwise', 'pointwise'),
        ('c 576x14x14 576x1x3x3 s2 p1 g576', 'depthwise-cl', 'depthwise-cl'),
        ('c 576x7x7 160x576x1x1 s1 p0', 'nin', 'nin'),
        ('c 160x7x7 960x160x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 960x7x7 960x1x3x3 s1 p1 g960', 'depthwise-cl', 'depthwise-cl'),
        ('c 960x7x7 160x960x1x1 s1 p0', 'nin', 'nin'),
        ('c 160x7x7 960x160x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 960x7x7 960x1x3x3 s1 p1 g960', 'depthwise-cl', 'depthwise-cl'),
        ('c 960x7x7 160x960x1x1 s1 p0', 'nin', 'nin'),
        ('c 160x7x7 960x160x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
        ('c 960x7x7 960x1x3x3 s1 p1 g960', 'depthwise-cl', 'depthwise-cl'),
        ('c 960x7x7 320x960x1x1 s1 p0', 'nin', 'nin'),
        ('c 320x7x7 1280x320x1x1 s1 p0', 'im2col-flat', 'im2col-flat'),
    ]),
}

_DW = {"channels-last": "cl", "phase-planes": "planes", "blocked": "blocked"}


def _ints(tok, n):
    vals = [int(e) for e in tok[1:].split(",")]
    return tuple(vals * n if len(vals) == 1 else vals)


def _geometry(layer, batch):
    """(kind, array, weight shape or ksize, stride, pads, dil, groups, cl) of a layer string."""
    tok = layer.split()
    what, chw = tok[0], tuple(int(e) for e in tok[1].split("x"))
    opts = {t[0]: t for t in tok[2:] if t[0] in "kspdg"}
    nd = len(chw) - 1
    cl = "cl" in tok
    x = np.broadcast_to(np.float32(0), (batch, *chw))
    xl = x.transpose(0, x.ndim - 1, *range(1, x.ndim - 1)) if cl else x
    flat = _ints(opts["p"], 2 * nd)
    pads = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(nd))
    stride = _ints(opts["s"], nd)
    if what == "c":
        w = tuple(int(e) for e in tok[2].split("x"))
        dil = _ints(opts["d"], nd) if "d" in opts else (1,) * nd
        groups = int(opts["g"][1:]) if "g" in opts else 1
        return what, xl, w, stride, pads, dil, groups, cl
    return what, xl, _ints(opts["k"], nd), stride, pads, None, None, cl


def _kind(layer, batch, train):
    what, xl, w, stride, pads, dil, groups, cl = _geometry(layer, batch)
    if what == "c":
        wa = np.broadcast_to(np.float32(0), w)
        p = plans.plan_conv(xl, wa, stride, pads, dil, groups, cl, train=train)
        kind = p.kind + ("-flat" if p.flat and p.kind == "im2col" else "")
        if p.kind == "depthwise":
            kind += "-" + _DW[p.detail]
        return kind + (" trim" if p.trim is not None else "")
    padded = (*xl.shape[:2], *(n + lo + hi for n, (lo, hi) in zip(xl.shape[2:], pads)))
    xpad = np.broadcast_to(np.float32(0), padded)
    p = plans.plan_pool(what, xpad, w, stride, pads, cl)
    return what + ("-compiled" if p.compiled else "")


@pytest.fixture(params=[False, True], ids=["numpy", "numba"])
def compiled(request, monkeypatch):
    if request.param:
        pytest.importorskip("numba")
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, request.param)
    monkeypatch.setitem(settings._values, settings.NUM_THREADS_ENV, 2)
    from paddle_hl import backend

    assert backend.compiled_kernels_in_use() is request.param
    return request.param


@pytest.mark.parametrize("model", sorted(PINNED))
def test_pinned_kinds(model, compiled):
    batch, train, layers = PINNED[model]
    got = [_kind(layer, batch, train) for layer, _, _ in layers]
    want = [jit if compiled else plain for _, plain, jit in layers]
    diff = [(layer, w, g) for (layer, _, _), w, g in zip(layers, want, got) if w != g]
    assert not diff, f"{model}: the algorithm changed for (layer, pinned, now): {diff}"


def test_numpy_winograd_runs_on_one_thread_only(monkeypatch):
    """NumPy's Winograd transforms win in CPU time but lose in wall time on several threads
    (backend/tuning.py, winograd.numpy_max_threads): a one-thread pool takes them."""
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, False)
    layer = "c 64x56x56 64x64x3x3 s1 p1"
    kinds = {}
    for threads in (1, 2):
        monkeypatch.setitem(settings._values, settings.NUM_THREADS_ENV, threads)
        kinds[threads] = _kind(layer, 8, False)
    assert kinds == {1: "winograd", 2: "im2col-flat"}
