"""GhostNet as PaddleClas's model zoo defines it (old-style ``nn.BatchNorm(act=...)`` blocks,
squeeze-excitation gates clipped to [0, 1], a 1x1 "fc_0" conv block after global pooling),
written once against a module argument so the parity tests build the same network, with the
same structured parameter names, in paddle_hl and in the oracle.

Not collected by pytest (leading underscore); the tests call :func:`ghostnet`.
"""

from __future__ import annotations

import math

# k, expansion, channels, squeeze-excitation, stride, per bottleneck
STAGES = [
    (3, 16, 16, 0, 1), (3, 48, 24, 0, 2), (3, 72, 24, 0, 1), (5, 72, 40, 1, 2),
    (5, 120, 40, 1, 1), (3, 240, 80, 0, 2), (3, 200, 80, 0, 1), (3, 184, 80, 0, 1),
    (3, 184, 80, 0, 1), (3, 480, 112, 1, 1), (3, 672, 112, 1, 1), (5, 672, 160, 1, 2),
    (5, 960, 160, 0, 1), (5, 960, 160, 1, 1), (5, 960, 160, 0, 1), (5, 960, 160, 1, 1),
]


def _divisible(v, divisor=4):
    out = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return out + divisor if out < 0.9 * v else out


def ghostnet(paddle, scale=0.5, class_num=10, param_names=True):
    """Build GhostNet with ``paddle`` (real Paddle or paddle_hl) and return the model.

    ``param_names``: give the parameters the zoo's names (Paddle refuses a name twice in a
    process, so a second build there needs False)."""
    nn = paddle.nn
    F = paddle.nn.functional
    init = paddle.nn.initializer

    def _attr(name, initializer=None):
        return paddle.ParamAttr(name=name if param_names else None, initializer=initializer)

    def _uniform(fan_in, name):
        bound = 1.0 / math.sqrt(fan_in)
        return _attr(name, init.Uniform(-bound, bound))

    class ConvBN(nn.Layer):
        def __init__(self, cin, cout, k, stride=1, groups=1, act="relu", name=""):
            super().__init__()
            self._conv = nn.Conv2D(cin, cout, k, stride=stride, padding=(k - 1) // 2,
                                   groups=groups, bias_attr=False,
                                   weight_attr=_attr(name + "_weights",
                                                     init.KaimingNormal()))
            self._batch_norm = nn.BatchNorm(
                cout, act=act, param_attr=_attr(name + "_bn_scale"),
                bias_attr=_attr(name + "_bn_offset"),
                moving_mean_name=name + "_bn_mean" if param_names else None,
                moving_variance_name=name + "_bn_variance" if param_names else None)

        def forward(self, x):
            return self._batch_norm(self._conv(x))

    class SE(nn.Layer):
        def __init__(self, c, name=""):
            super().__init__()
            self.pool2d_gap = nn.AdaptiveAvgPool2D(1)
            self.squeeze = nn.Linear(c, c // 4, weight_attr=_uniform(c, name + "_1_weights"),
                                     bias_attr=_attr(name + "_1_offset"))
            self.excitation = nn.Linear(c // 4, c,
                                        weight_attr=_uniform(c // 4, name + "_2_weights"),
                                        bias_attr=_attr(name + "_2_offset"))

        def forward(self, x):
            g = paddle.squeeze(self.pool2d_gap(x), axis=[2, 3])
            g = self.excitation(F.relu(self.squeeze(g)))
            g = paddle.unsqueeze(paddle.clip(g, min=0, max=1), axis=[2, 3])
            return paddle.multiply(x, g)

    class Ghost(nn.Layer):
        def __init__(self, cin, cout, relu, name=""):
            super().__init__()
            first = int(math.ceil(cout / 2))
            act = "relu" if relu else None
            self.primary_conv = ConvBN(cin, first, 1, act=act, name=name + "_primary_conv")
            self.cheap_operation = ConvBN(first, first, 3, groups=first, act=act,
                                          name=name + "_cheap_operation")

        def forward(self, x):
            a = self.primary_conv(x)
            return paddle.concat([a, self.cheap_operation(a)], axis=1)

    class Bottleneck(nn.Layer):
        def __init__(self, cin, hidden, cout, k, stride, se, name=""):
            super().__init__()
            self._stride, self._se = stride, se
            self._identity = stride == 1 and cin == cout
            self.ghost_module_1 = Ghost(cin, hidden, True, name + "_ghost_module_1")
            if stride == 2:
                self.depthwise_conv = ConvBN(hidden, hidden, k, stride, hidden, None,
                                             name + "_depthwise_depthwise")
            if se:
                self.se_block = SE(hidden, name + "_se")
            self.ghost_module_2 = Ghost(hidden, cout, False, name + "_ghost_module_2")
            if not self._identity:
                self.shortcut_depthwise = ConvBN(cin, cin, k, stride, cin, None,
                                                 name + "_shortcut_depthwise_depthwise")
                self.shortcut_conv = ConvBN(cin, cout, 1, act=None,
                                            name=name + "_shortcut_conv")

        def forward(self, x):
            y = self.ghost_module_1(x)
            if self._stride == 2:
                y = self.depthwise_conv(y)
            if self._se:
                y = self.se_block(y)
            y = self.ghost_module_2(y)
            skip = x if self._identity else self.shortcut_conv(self.shortcut_depthwise(x))
            return paddle.add(y, skip)

    class GhostNet(nn.Layer):
        def __init__(self):
            super().__init__()
            c = _divisible(16 * scale)
            self.conv1 = ConvBN(3, c, 3, stride=2, name="conv1")
            self.ghost_bottleneck_list = []
            for i, (k, exp, width, se, s) in enumerate(STAGES):
                cout, hidden = _divisible(width * scale), _divisible(exp * scale)
                name = f"_ghostbottleneck_{i}"
                block = Bottleneck(c, hidden, cout, k, s, se, name)
                self.ghost_bottleneck_list.append(self.add_sublayer(name, block))
                c = cout
            last = _divisible(STAGES[-1][1] * scale)
            self.conv_last = ConvBN(c, last, 1, name="conv_last")
            self.pool2d_gap = nn.AdaptiveAvgPool2D(1)
            self.fc_0 = ConvBN(last, 1280, 1, name="fc_0")
            self.dropout = nn.Dropout(p=0.2)
            self.fc_1 = nn.Linear(1280, class_num, weight_attr=_uniform(1280, "fc_1_weights"),
                                  bias_attr=_attr("fc_1_offset"))

        def forward(self, x):
            x = self.conv1(x)
            for block in self.ghost_bottleneck_list:
                x = block(x)
            x = self.pool2d_gap(self.conv_last(x))
            x = self.dropout(self.fc_0(x))
            return self.fc_1(paddle.reshape(x, [-1, 1280]))

    return GhostNet()
