"""Pieces shared by the model-zoo families: channel rounding, the conv -> norm -> activation
stack, the pretrained-weight loader and the intermediate-feature extractor."""

from __future__ import annotations

from collections import OrderedDict

import paddle_hl as paddle
from paddle_hl import nn

__all__ = []

# Sentinel for "use BatchNorm2D / ReLU": resolved when a layer is built, so importing the zoo
# never depends on which nn layer families are already loaded.
_DEFAULT = object()


def _make_divisible(v, divisor=8, min_value=None):
    """Round a channel count to a multiple of ``divisor`` (the MobileNet rule).

    Rounds to the nearest multiple, never below ``min_value`` (default ``divisor``), and bumps
    one step up when rounding down would lose more than 10% of ``v``.
    """
    if min_value is None:
        min_value = divisor
    rounded = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if rounded < 0.9 * v:
        rounded += divisor
    return rounded


def _same_padding(kernel_size, dilation):
    """Padding that keeps the spatial size at stride 1 for odd kernels (int or pair)."""
    if isinstance(kernel_size, (list, tuple)):
        if not isinstance(dilation, (list, tuple)):
            dilation = (dilation,) * len(kernel_size)
        return [(k - 1) // 2 * d for k, d in zip(kernel_size, dilation)]
    return (kernel_size - 1) // 2 * dilation


class ConvNormActivation(nn.Sequential):
    """``Conv2D -> norm_layer -> activation_layer`` as one Sequential (keys ``0.*``, ``1.*``).

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|tuple, optional): conv kernel size. Default: 3.
        stride (int, optional): conv stride. Default: 1.
        padding (int|tuple, optional): conv padding; None keeps the size at stride 1.
        groups (int, optional): conv groups. Default: 1.
        norm_layer (callable, optional): builds the norm layer from ``out_channels``; None for
            no norm. Default: ``nn.BatchNorm2D``.
        activation_layer (callable, optional): builds the activation; None for none.
            Default: ``nn.ReLU``.
        dilation (int, optional): conv dilation. Default: 1.
        bias (bool, optional): conv bias; None means "only when there is no norm layer".
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=_DEFAULT, activation_layer=_DEFAULT, dilation=1,
                 bias=None):
        if norm_layer is _DEFAULT:
            norm_layer = nn.BatchNorm2D
        if activation_layer is _DEFAULT:
            activation_layer = nn.ReLU
        if padding is None:
            padding = _same_padding(kernel_size, dilation)
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups,
                            bias_attr=None if bias else False)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)
        # conv -> norm (-> activation): a span paddle_hl may run fused (see nn/_fusion.py)
        self._fusions = (tuple(range(len(layers))),) if norm_layer is not None else ()


def _uniform_attr(stdv):
    """ParamAttr drawing from U(-stdv, stdv): the init Paddle's zoo uses for several heads."""
    return paddle.ParamAttr(initializer=nn.initializer.Uniform(-stdv, stdv))


def _published(arch, model_urls):
    """(url, md5) of the published weights of ``arch``; a clear error when there are none."""
    if arch not in model_urls:
        raise ValueError(
            f"{arch} model does not have pretrained weights (published: "
            f"{', '.join(sorted(model_urls)) or 'none'}); set pretrained=False")
    return model_urls[arch]


def build_model(cls, arch, pretrained, model_urls, *args, **kwargs):
    """``cls(*args, **kwargs)``, with the published weights of ``arch`` when ``pretrained``.

    Args:
        cls (type): the network class.
        arch (str): key of ``model_urls`` (e.g. ``'resnet50'``, ``'mobilenetv2_1.0'``).
        pretrained (bool): download (or reuse from the cache) and load the weights.
        model_urls (dict): arch -> (url, md5), the family's table of published files.
        *args, **kwargs: passed to ``cls``.

    Returns:
        nn.Layer: the model.

    Raises:
        ValueError: when ``pretrained`` and no file is published for ``arch`` (checked before
            the network is built).
    """
    entry = _published(arch, model_urls) if pretrained else None
    model = cls(*args, **kwargs)
    if entry is not None:
        # Imported here: the download helper (and requests) is only needed for weights.
        from paddle_hl.utils.download import get_weights_path_from_url

        model.set_state_dict(paddle.load(get_weights_path_from_url(*entry)))
    return model


class IntermediateLayerGetter(nn.LayerDict):
    """Run a model's direct children in order and return the outputs of chosen ones.

    Args:
        model (nn.Layer): the network; its children must be called in registration order.
        return_layers (dict[str, str]): child name -> key of that output in the result.

    Returns:
        OrderedDict[str, Tensor] from ``forward``.
    """

    def __init__(self, model, return_layers):
        children = [name for name, _ in model.named_children()]
        if not set(return_layers).issubset(children):
            raise ValueError(
                f"IntermediateLayerGetter: return_layers {sorted(return_layers)} are not all "
                f"children of the model ({children})")
        wanted = {str(k) for k in return_layers}
        layers = OrderedDict()
        for name, layer in model.named_children():
            layers[name] = layer
            wanted.discard(name)
            if not wanted:
                break
        super().__init__(layers)
        self.return_layers = {str(k): str(v) for k, v in return_layers.items()}

    def forward(self, x):
        out = OrderedDict()
        for name, layer in self.items():
            # A classifier head follows a 4-D feature map: flatten it as the model would.
            first = layer if isinstance(layer, nn.Linear) else next(iter(layer.sublayers()), None)
            if x.ndim == 4 and isinstance(first, nn.Linear):
                x = paddle.flatten(x, 1)
            x = layer(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out
