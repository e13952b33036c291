"""``paddle.vision.datasets``: MNIST, FashionMNIST, Cifar10/100, Flowers, VOC2012 and the
folder datasets. Downloads go through ``paddle_hl.utils.download`` into ``DATA_HOME``."""

from .cifar import Cifar10, Cifar100
from .flowers import Flowers
from .folder import DatasetFolder, ImageFolder
from .mnist import MNIST, FashionMNIST
from .voc2012 import VOC2012

__all__ = [
    "DatasetFolder",
    "ImageFolder",
    "MNIST",
    "FashionMNIST",
    "Flowers",
    "Cifar10",
    "Cifar100",
    "VOC2012",
]
