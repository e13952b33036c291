"""Every simple public layer of ``paddle_hl.nn`` through the layer checker (tests/layer_check.py):
activations, common layers, convolutions, normalisations and pooling. Recurrent and transformer
layers are in test_harness_seq.py, loss and distance layers in test_harness_loss.py.

Each id is one layer configuration, checked against real Paddle (when installed) for state_dict,
forward, gradients, save/load, dtypes and one SGD step, and against float64 finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl
from tests.layer_check import (
    ALL_CHECKS,
    LayerCheckError,
    case,
    check_layer,
    input_makers,
    run_case,
)

x, ints = input_makers(1)


# ----------------------------------------------------------------------------- activations
def _act(name, *args, shape=(2, 3, 4), known=None, **kw):
    ident = name + "".join(f"-{a}" for a in args) + "".join(f"-{k}={v}" for k, v in kw.items())
    return case(ident, lambda L: getattr(L.nn, name)(*args, **kw), [x(*shape)], known=known)


_TRAIN_INT = {"int_input": "an int64 x in training: Paddle documents float x only, yet runs an "
                           "integer x through its float formula with every factor cast to "
                           "int64 first (dropout2d with p=0.3 leaves kept values unscaled, "
                           "alpha_dropout with p=0.5 returns zeros), a bug not copied: "
                           "paddle_hl raises TypeError"}


ACTIVATIONS = [
    *_act("CELU"), *_act("CELU", alpha=0.5), *_act("ELU"), *_act("ELU", alpha=0.3),
    *_act("GELU"), *_act("GELU", approximate=True), *_act("Hardshrink"),
    *_act("Hardsigmoid"), *_act("Hardswish"), *_act("Hardtanh", min=-0.5, max=0.7),
    *_act("LeakyReLU"), *_act("LeakyReLU", negative_slope=0.2), *_act("LogSigmoid"),
    *_act("LogSoftmax"), *_act("LogSoftmax", axis=1), *_act("Mish"), *_act("ReLU"),
    *_act("ReLU6", shape=(2, 3, 4)), *_act("SELU"), *_act("Sigmoid"),
    *_act("Silu"),
    *_act("Softmax"), *_act("Softmax", axis=0), *_act("Softmax2D", shape=(2, 3, 2, 2)),
    *_act("Softplus"), *_act("Softplus", beta=2, threshold=1.0), *_act("Softshrink"),
    *_act("Softsign"), *_act("Swish"), *_act("Tanh"), *_act("Tanhshrink"),
    *_act("ThresholdedReLU", threshold=0.3), *_act("GLU", shape=(2, 3, 4)),
    *_act("GLU", axis=1, shape=(2, 4, 3)), *_act("Maxout", 2, shape=(2, 4, 3, 3)),
    *_act("Maxout", 2, axis=-1, shape=(2, 3, 3, 4)), *_act("Identity"),
    *case("PReLU", lambda L: L.nn.PReLU(), [x(2, 3, 4)]),
    *case("PReLU-3-channels", lambda L: L.nn.PReLU(3, init=0.1), [x(2, 3, 4)]),
    *case("PReLU-NHWC", lambda L: L.nn.PReLU(3, data_format="NHWC"), [x(2, 2, 2, 3)]),
    # RReLU draws its slopes in training; in eval mode it is a fixed leaky ReLU
    *case("RReLU-eval", lambda L: L.nn.RReLU(), [x(2, 3, 4)], mode="eval"),
    *case("RReLU-train", lambda L: L.nn.RReLU(), [x(2, 3, 4)], random=True),
]


# ----------------------------------------------------------------------------- common
def _pad(name, padding, shape, **kw):
    ident = f"{name}-{padding}" + "".join(f"-{k}={v}" for k, v in kw.items())
    return case(ident, lambda L: getattr(L.nn, name)(padding, **kw), [x(*shape)])


def _up(ident, shape, **kw):
    return case(ident, lambda L: L.nn.Upsample(**kw), [x(*shape)])


def _containers(L):
    """Sequential, LayerList, LayerDict and ParameterList nested in one network."""
    class Net(L.nn.Layer):
        def __init__(self):
            super().__init__()
            self.seq = L.nn.Sequential(L.nn.Linear(4, 5), L.nn.Tanh())
            self.named = L.nn.Sequential(("fc", L.nn.Linear(5, 5)), ("act", L.nn.Sigmoid()))
            self.blocks = L.nn.LayerList([L.nn.Linear(5, 5) for _ in range(2)])
            self.heads = L.nn.LayerDict({"a": L.nn.Linear(5, 2), "b": L.nn.Linear(5, 3)})
            self.scales = L.nn.ParameterList(
                [self.create_parameter([2]), self.create_parameter([3])])

        def forward(self, v):
            h = self.named(self.seq(v))
            for block in self.blocks:
                h = h + block(h)
            return self.heads["a"](h) * self.scales[0], self.heads["b"](h) * self.scales[1]
    return Net()


COMMON = [
    *case("containers", _containers, [x(2, 4)]),
    *case("Linear", lambda L: L.nn.Linear(4, 3), [x(2, 4)]),
    *case("Linear-3d-input", lambda L: L.nn.Linear(4, 3), [x(2, 5, 4)]),
    *case("Linear-no-bias", lambda L: L.nn.Linear(4, 3, bias_attr=False), [x(2, 4)]),
    *case("Bilinear", lambda L: L.nn.Bilinear(3, 4, 5), [x(2, 3), x(2, 4)]),
    *case("Embedding", lambda L: L.nn.Embedding(10, 3), [ints(10, 2, 4)]),
    *case("Embedding-padding_idx", lambda L: L.nn.Embedding(10, 3, padding_idx=0),
          [np.array([[0, 2, 0], [5, 9, 1]])], frozen=()),
    *case("Dropout-eval", lambda L: L.nn.Dropout(0.5), [x(2, 3)], mode="eval"),
    *case("Dropout-train", lambda L: L.nn.Dropout(0.5), [x(2, 3)], random=True),
    *case("Dropout-downscale-eval",
          lambda L: L.nn.Dropout(0.3, mode="downscale_in_infer"), [x(2, 3)], mode="eval"),
    *case("Dropout2D-eval", lambda L: L.nn.Dropout2D(0.5), [x(2, 3, 2, 2)], mode="eval"),
    *case("Dropout2D-train", lambda L: L.nn.Dropout2D(0.5), [x(2, 3, 2, 2)], random=True,
          known=_TRAIN_INT),
    *case("AlphaDropout-train", lambda L: L.nn.AlphaDropout(0.5), [x(2, 3)], random=True,
          known=_TRAIN_INT),
    *case("Dropout3D-eval", lambda L: L.nn.Dropout3D(0.5), [x(2, 3, 2, 2, 2)], mode="eval"),
    *case("AlphaDropout-eval", lambda L: L.nn.AlphaDropout(0.5), [x(2, 3)], mode="eval"),
    *case("Flatten", lambda L: L.nn.Flatten(), [x(2, 3, 2, 2)]),
    *case("Flatten-1-2", lambda L: L.nn.Flatten(1, 2), [x(2, 3, 2, 2)]),
    *case("Unflatten", lambda L: L.nn.Unflatten(1, [2, 3]), [x(2, 6, 2)]),
    *_pad("Pad1D", [1, 2], (2, 3, 4)), *_pad("Pad1D", 1, (2, 3, 4), mode="reflect"),
    *_pad("Pad1D", [2, 1], (2, 3, 4), mode="replicate"),
    *_pad("Pad1D", [1, 1], (2, 3, 4), mode="circular"),
    *_pad("Pad1D", 1, (2, 4, 3), mode="constant", value=0.5, data_format="NLC"),
    *_pad("Pad2D", [1, 0, 2, 1], (2, 3, 3, 4)),
    *_pad("Pad2D", 1, (2, 3, 3, 4), mode="reflect"),
    *_pad("Pad2D", [1, 2, 0, 1], (2, 3, 3, 4), mode="replicate"),
    *_pad("Pad2D", 1, (2, 3, 3, 4), mode="circular"),
    *_pad("Pad2D", 1, (2, 3, 4, 3), data_format="NHWC"),
    *_pad("Pad3D", [1, 0, 0, 1, 1, 1], (1, 2, 2, 3, 3)),
    *_pad("Pad3D", 1, (1, 2, 2, 3, 3), mode="replicate"),
    *_pad("ZeroPad2D", [1, 2, 0, 1], (2, 3, 3, 3)),
    *_up("Upsample-nearest-x2", (1, 2, 3, 3), scale_factor=2),
    *_up("Upsample-nearest-size", (1, 2, 3, 3), size=[5, 4]),
    *_up("Upsample-bilinear", (1, 2, 3, 3), scale_factor=2, mode="bilinear"),
    *_up("Upsample-bilinear-align", (1, 2, 3, 3), size=[5, 4], mode="bilinear",
         align_corners=True),
    *_up("Upsample-bilinear-align_mode1", (1, 2, 3, 3), scale_factor=2, mode="bilinear",
         align_mode=1),
    *_up("Upsample-bicubic", (1, 2, 3, 3), size=[5, 5], mode="bicubic"),
    *_up("Upsample-linear", (1, 2, 4), scale_factor=2, mode="linear", data_format="NCW"),
    *_up("Upsample-trilinear", (1, 1, 2, 3, 3), scale_factor=2, mode="trilinear",
         data_format="NCDHW"),
    *_up("Upsample-nearest-NHWC", (1, 3, 3, 2), scale_factor=2, data_format="NHWC"),
    *case("UpsamplingBilinear2D", lambda L: L.nn.UpsamplingBilinear2D(scale_factor=2),
          [x(1, 2, 3, 3)]),
    *case("UpsamplingNearest2D", lambda L: L.nn.UpsamplingNearest2D(size=[4, 5]),
          [x(1, 2, 3, 3)]),
    *case("PixelShuffle", lambda L: L.nn.PixelShuffle(2), [x(1, 8, 2, 3)]),
    *case("PixelShuffle-NHWC", lambda L: L.nn.PixelShuffle(2, data_format="NHWC"),
          [x(1, 2, 3, 8)]),
    *case("PixelUnshuffle", lambda L: L.nn.PixelUnshuffle(2), [x(1, 2, 4, 6)]),
    *case("ChannelShuffle", lambda L: L.nn.ChannelShuffle(2), [x(1, 6, 2, 2)]),
    *case("ChannelShuffle-NHWC", lambda L: L.nn.ChannelShuffle(3, data_format="NHWC"),
          [x(1, 2, 2, 6)]),
    *case("Unfold", lambda L: L.nn.Unfold(kernel_sizes=2, strides=1, paddings=1),
          [x(1, 2, 3, 3)]),
    *case("Fold", lambda L: L.nn.Fold(output_sizes=[3, 3], kernel_sizes=2),
          [x(1, 8, 4)]),
]


# ----------------------------------------------------------------------------- conv
def _conv(ident, cls, cin, shape, *args, slow=False, **kw):
    return case(ident, lambda L: getattr(L.nn, cls)(cin, *args, **kw), [x(*shape)], slow=slow)


CONV = [
    *_conv("Conv1D", "Conv1D", 2, (2, 2, 6), 3, 3),
    *_conv("Conv1D-stride2-pad1", "Conv1D", 2, (2, 2, 7), 3, 3, stride=2, padding=1),
    *_conv("Conv1D-NLC", "Conv1D", 2, (2, 6, 2), 3, 2, data_format="NLC"),
    *_conv("Conv2D", "Conv2D", 2, (1, 2, 5, 5), 3, 3),
    *_conv("Conv2D-stride2-pad1", "Conv2D", 2, (1, 2, 5, 5), 3, 3, stride=2, padding=1),
    *_conv("Conv2D-groups2", "Conv2D", 4, (1, 4, 4, 4), 6, 3, groups=2, padding=1),
    *_conv("Conv2D-depthwise", "Conv2D", 3, (1, 3, 4, 4), 3, 3, groups=3),
    *_conv("Conv2D-dilation2", "Conv2D", 2, (1, 2, 6, 6), 2, 3, dilation=2),
    *_conv("Conv2D-NHWC", "Conv2D", 2, (1, 5, 5, 2), 3, 3, padding=1, data_format="NHWC"),
    *_conv("Conv2D-same", "Conv2D", 2, (1, 2, 5, 4), 2, 3, stride=2, padding="same"),
    *_conv("Conv2D-valid-rect", "Conv2D", 2, (1, 2, 5, 6), 2, (2, 3), padding="valid"),
    *_conv("Conv2D-reflect", "Conv2D", 2, (1, 2, 4, 4), 2, 3, padding=1,
           padding_mode="reflect"),
    *_conv("Conv2D-circular", "Conv2D", 2, (1, 2, 4, 4), 2, 3, padding=1,
           padding_mode="circular"),
    *_conv("Conv2D-no-bias", "Conv2D", 2, (1, 2, 4, 4), 2, 3, bias_attr=False),
    *_conv("Conv3D", "Conv3D", 2, (1, 2, 3, 4, 4), 2, 2),
    *_conv("Conv3D-pad-stride", "Conv3D", 2, (1, 2, 4, 4, 4), 2, 3, stride=2, padding=1),
    *_conv("Conv3D-NDHWC", "Conv3D", 2, (1, 3, 3, 3, 2), 2, 2, data_format="NDHWC"),
    *_conv("Conv1DTranspose", "Conv1DTranspose", 2, (2, 2, 4), 3, 3),
    *_conv("Conv1DTranspose-stride2", "Conv1DTranspose", 2, (2, 2, 4), 2, 3, stride=2,
           padding=1, output_padding=1),
    *_conv("Conv2DTranspose", "Conv2DTranspose", 2, (1, 2, 3, 3), 3, 3),
    *_conv("Conv2DTranspose-stride2-outpad", "Conv2DTranspose", 2, (1, 2, 3, 3), 2, 3,
           stride=2, padding=1, output_padding=1),
    *_conv("Conv2DTranspose-groups2", "Conv2DTranspose", 4, (1, 4, 3, 3), 4, 2, groups=2),
    *_conv("Conv2DTranspose-dilation2", "Conv2DTranspose", 2, (1, 2, 3, 3), 2, 2,
           dilation=2),
    *_conv("Conv2DTranspose-NHWC", "Conv2DTranspose", 2, (1, 3, 3, 2), 2, 3, stride=2,
           data_format="NHWC"),
    *_conv("Conv3DTranspose", "Conv3DTranspose", 2, (1, 2, 2, 3, 3), 2, 2, stride=2),
]


# ----------------------------------------------------------------------------- norm
NORM = [
    *case("BatchNorm1D-2d-input", lambda L: L.nn.BatchNorm1D(3), [x(4, 3)]),
    *case("BatchNorm1D-3d-input", lambda L: L.nn.BatchNorm1D(3), [x(2, 3, 4)]),
    *case("BatchNorm1D-NLC", lambda L: L.nn.BatchNorm1D(3, data_format="NLC"), [x(2, 4, 3)]),
    *case("BatchNorm2D", lambda L: L.nn.BatchNorm2D(3), [x(2, 3, 3, 3)]),
    *case("BatchNorm2D-eval", lambda L: L.nn.BatchNorm2D(3), [x(2, 3, 3, 3)], mode="eval"),
    *case("BatchNorm2D-NHWC", lambda L: L.nn.BatchNorm2D(3, data_format="NHWC"),
          [x(2, 3, 3, 3)]),
    *case("BatchNorm2D-momentum", lambda L: L.nn.BatchNorm2D(3, momentum=0.5, epsilon=1e-3),
          [x(2, 3, 2, 2)]),
    *case("BatchNorm2D-global-stats",
          lambda L: L.nn.BatchNorm2D(3, use_global_stats=True), [x(2, 3, 2, 2)]),
    *case("BatchNorm3D", lambda L: L.nn.BatchNorm3D(2), [x(2, 2, 2, 2, 3)]),
    *case("BatchNorm-legacy", lambda L: L.nn.BatchNorm(3), [x(2, 3, 2, 2)]),
    *case("BatchNorm-legacy-relu", lambda L: L.nn.BatchNorm(3, act="relu"), [x(2, 3, 2, 2)]),
    # Paddle has no CPU kernel for SyncBatchNorm; in one process it is BatchNorm2D
    *case("SyncBatchNorm", lambda L: (L.nn.SyncBatchNorm if L is paddle_hl
                                      else L.nn.BatchNorm2D)(3), [x(2, 3, 2, 2)]),
    *case("LayerNorm", lambda L: L.nn.LayerNorm(4), [x(2, 3, 4)]),
    *case("LayerNorm-2d", lambda L: L.nn.LayerNorm([3, 4]), [x(2, 3, 4)]),
    *case("LayerNorm-no-affine",
          lambda L: L.nn.LayerNorm(4, weight_attr=False, bias_attr=False), [x(2, 3, 4)]),
    *case("GroupNorm", lambda L: L.nn.GroupNorm(2, 4), [x(2, 4, 2, 3)]),
    *case("GroupNorm-3d", lambda L: L.nn.GroupNorm(3, 6, epsilon=1e-3), [x(2, 6, 4)]),
    *case("InstanceNorm1D", lambda L: L.nn.InstanceNorm1D(3), [x(2, 3, 5)]),
    *case("InstanceNorm2D", lambda L: L.nn.InstanceNorm2D(3), [x(2, 3, 3, 3)]),
    *case("InstanceNorm3D", lambda L: L.nn.InstanceNorm3D(2), [x(2, 2, 2, 2, 3)]),
    *case("LocalResponseNorm", lambda L: L.nn.LocalResponseNorm(3), [x(2, 5, 2, 2)]),
    *case("LocalResponseNorm-args",
          lambda L: L.nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0), [x(2, 4, 3, 3)]),
    # the power iteration's u, v are constants of the backward by design, so finite
    # differences (which see them move with the weight) do not apply
    *case("SpectralNorm", lambda L: L.nn.SpectralNorm([3, 4], power_iters=2), [x(3, 4)],
          checks=tuple(c for c in ALL_CHECKS if c != "fd"),
          known={"grad": "a Paddle bug not copied: Paddle's weight gradient is G/sigma - "
                         "sum(W) * (u v^T * G)/sigma^2 (to 1e-15 in float64), not the "
                         "derivative of W/sigma; paddle_hl's is G/sigma - sum(G*W)/sigma^2 "
                         "* u v^T with the iterated u, v held constant"}),
]


# ----------------------------------------------------------------------------- pooling
def _pool(ident, cls, shape, *args, **kw):
    return case(ident, lambda L: getattr(L.nn, cls)(*args, **kw), [x(*shape)])


def _unpool(nd):
    """MaxPool{nd}D with return_mask feeding MaxUnPool{nd}D: the pair as one layer."""
    def make(L):
        class Pair(L.nn.Layer):
            def __init__(self):
                super().__init__()
                self.pool = getattr(L.nn, f"MaxPool{nd}D")(2, return_mask=True)
                self.unpool = getattr(L.nn, f"MaxUnPool{nd}D")(2)

            def forward(self, v):
                out, mask = self.pool(v)
                return self.unpool(out, mask)
        return Pair()
    shape = {1: (1, 2, 6), 2: (1, 2, 4, 4), 3: (1, 1, 4, 4, 2)}[nd]
    return case(f"MaxUnPool{nd}D", make, [x(*shape)])


POOLING = [
    *_pool("AvgPool1D", "AvgPool1D", (2, 3, 6), 2),
    *_pool("AvgPool1D-pad-no-exclusive", "AvgPool1D", (2, 3, 5), 3, 2, 1, exclusive=False),
    *_pool("AvgPool2D", "AvgPool2D", (1, 2, 4, 4), 2),
    *_pool("AvgPool2D-pad-ceil", "AvgPool2D", (1, 2, 5, 5), 3, 2, 1, ceil_mode=True),
    *_pool("AvgPool2D-divisor", "AvgPool2D", (1, 2, 4, 4), 2, divisor_override=3),
    *_pool("AvgPool2D-NHWC", "AvgPool2D", (1, 4, 4, 2), 2, data_format="NHWC"),
    *_pool("AvgPool3D", "AvgPool3D", (1, 1, 4, 4, 2), 2),
    *_pool("MaxPool1D", "MaxPool1D", (2, 3, 6), 2),
    *_pool("MaxPool2D", "MaxPool2D", (1, 2, 4, 4), 2),
    *_pool("MaxPool2D-pad-stride", "MaxPool2D", (1, 2, 5, 5), 3, 2, 1),
    *_pool("MaxPool2D-ceil", "MaxPool2D", (1, 2, 5, 5), 2, ceil_mode=True),
    *_pool("MaxPool2D-mask", "MaxPool2D", (1, 2, 4, 4), 2, return_mask=True),
    *_pool("MaxPool2D-NHWC", "MaxPool2D", (1, 4, 4, 2), 2, data_format="NHWC"),
    *_pool("MaxPool3D", "MaxPool3D", (1, 1, 4, 4, 2), 2),
    *_pool("AdaptiveAvgPool1D", "AdaptiveAvgPool1D", (2, 3, 7), 3),
    *_pool("AdaptiveAvgPool2D", "AdaptiveAvgPool2D", (1, 2, 5, 7), [2, 3]),
    *_pool("AdaptiveAvgPool2D-NHWC", "AdaptiveAvgPool2D", (1, 5, 5, 2), 2,
           data_format="NHWC"),
    *_pool("AdaptiveAvgPool3D", "AdaptiveAvgPool3D", (1, 1, 3, 4, 5), 2),
    *_pool("AdaptiveMaxPool1D", "AdaptiveMaxPool1D", (2, 3, 7), 3),
    *_pool("AdaptiveMaxPool2D", "AdaptiveMaxPool2D", (1, 2, 5, 7), [2, 3]),
    *_pool("AdaptiveMaxPool2D-mask", "AdaptiveMaxPool2D", (1, 2, 4, 4), 2,
           return_mask=True),
    *_pool("AdaptiveMaxPool3D", "AdaptiveMaxPool3D", (1, 1, 3, 4, 5), 2),
    *_unpool(1), *_unpool(2), *_unpool(3),
]


@pytest.mark.parametrize("make, inputs, kw", ACTIVATIONS + COMMON + CONV + NORM + POOLING)
def test_layer(oracle, make, inputs, kw):
    run_case(oracle, make, inputs, kw)


# ----------------------------------------------------------------------------- the checker
class _Scaled(paddle_hl.nn.Layer):
    """``w * x`` with a gradient that drops the second term of ``w * x + x * x.detach()``."""

    def __init__(self, broken_grad):
        super().__init__()
        self.w = self.create_parameter([3], default_initializer=paddle_hl.nn.initializer.Constant(
            1.5))
        self.broken_grad = broken_grad

    def forward(self, v):
        extra = v * (v.detach() if self.broken_grad else v)
        return self.w * v + extra


def test_checker_catches_a_wrong_gradient():
    """The finite-difference part runs without the oracle and fails on a wrong backward."""
    v = np.array([[0.5, -1.2, 2.0], [1.1, 0.3, -0.7]], np.float32)
    check_layer(lambda L: _Scaled(False), [v], None, checks=("fd", "dtype",
                                                                   "train_step"))
    with pytest.raises(LayerCheckError, match=r"(?s)\[fd\].*gradient of input 0"):
        check_layer(lambda L: _Scaled(True), [v], None, checks=("fd",))


def test_checker_catches_a_wrong_forward_and_state(oracle):
    if oracle is None:
        pytest.skip("needs paddlepaddle==2.6.2, the oracle")

    def make(L):
        return L.nn.ReLU6() if L is paddle_hl else L.nn.ReLU()

    with pytest.raises(LayerCheckError, match=r"(?s)\[forward\].*output 0"):
        check_layer(make, [np.array([[7.0, -1.0, 2.0]], np.float32)], oracle,
                    checks=("forward",))

    def make_state(L):
        return L.nn.Linear(3, 2, bias_attr=L is not paddle_hl)

    with pytest.raises(LayerCheckError, match=r"(?s)\[state_dict\] .*keys"):
        check_layer(make_state, [x(2, 3)], oracle, checks=("state_dict",))


def test_checker_refuses_unknown_checks():
    with pytest.raises(AssertionError, match="unknown checks"):
        check_layer(lambda L: L.nn.ReLU(), [x(2)], None, checks=("forwrd",))


def test_spectral_norm_known_mismatch_is_paddles_formula(oracle):
    """The SpectralNorm gradient kept as a known mismatch: Paddle's backward is exactly
    ``G/sigma - sum(W) * (u v^T * G)/sigma^2``, not the derivative of its forward, and ours
    is ``G/sigma - sum(G*W)/sigma^2 * u v^T``."""
    if oracle is None:
        pytest.skip("needs paddlepaddle==2.6.2, the oracle")
    rng = np.random.default_rng(4)
    w, g = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    grads, state = {}, None
    for lib in (oracle, paddle_hl):
        sn = lib.nn.SpectralNorm([3, 4], power_iters=2, dtype="float64")
        if state is None:
            state = {k: t.numpy() for k, t in sn.state_dict().items()}
        sn.set_state_dict(state)
        t = lib.to_tensor(w, stop_gradient=False)
        (sn(t) * lib.to_tensor(g)).sum().backward()
        grads[lib.__name__] = t.grad.numpy()
    u, v = state["weight_u"], state["weight_v"]
    for _ in range(2):
        v = w.T @ u
        v = v / (np.linalg.norm(v) + 1e-12)
        u = w @ v
        u = u / (np.linalg.norm(u) + 1e-12)
    sigma, uv = u @ w @ v, np.outer(u, v)
    np.testing.assert_allclose(grads["paddle"], g / sigma - w.sum() * uv * g / sigma ** 2,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["paddle_hl"], g / sigma - (g * w).sum() * uv / sigma ** 2,
                               rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- integer inputs
def test_integer_input_rules_without_the_oracle():
    """The integer-input rules the checker holds to Paddle, checked without it: sigmoid and
    tanh refuse an integer x; channel dropouts and alpha dropout return it unchanged outside
    training and refuse it in training."""
    F = paddle_hl.nn.functional
    xi = paddle_hl.to_tensor(np.arange(-8, 40).reshape(2, 3, 2, 4))
    for fn in (F.sigmoid, F.tanh):
        with pytest.raises(TypeError, match=f"{fn.__name__}: argument 'x' has dtype int64"):
            fn(xi)
    for fn in (F.dropout2d, F.alpha_dropout):
        assert fn(xi, 0.5, training=False) is xi
        with pytest.raises(TypeError, match=f"{fn.__name__}: argument 'x' has dtype int64, "
                                            "expected a floating-point"):
            fn(xi, 0.5)
    x5 = paddle_hl.to_tensor(np.arange(48).reshape(2, 3, 2, 2, 2))
    assert F.dropout3d(x5, 0.5, training=False) is x5
    for layer in (paddle_hl.nn.Dropout2D(0.3), paddle_hl.nn.AlphaDropout(0.3)):
        layer.eval()
        np.testing.assert_array_equal(layer(xi).numpy(), xi.numpy())
