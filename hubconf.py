"""Hub entrypoints of paddle_hl: the vision model zoo.

Every model constructor of ``paddle_hl.vision.models`` (``resnet18``, ``mobilenet_v2``,
``vgg16``, ...) is an entrypoint, so from a checkout::

    import paddle_hl as paddle
    paddle.hub.list('/path/to/checkout', source='local')
    net = paddle.hub.load('/path/to/checkout', 'resnet18', source='local', pretrained=False)

Keyword arguments of ``hub.load`` go to the constructor (``pretrained``, ``num_classes``, ...).
"""

from paddle_hl.vision.models import MODEL_REGISTRY as _MODEL_REGISTRY

dependencies = ["numpy", "paddle_hl"]

# One module-level name per constructor: hub lists the public callables of this module.
globals().update(_MODEL_REGISTRY)
