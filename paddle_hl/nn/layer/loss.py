"""Loss layers: thin Layer wrappers over :mod:`paddle_hl.nn.functional.loss`."""

from __future__ import annotations

from ...framework.dtype import get_default_dtype
from ..functional import loss as F
from .layers import Layer

__all__ = []


class _Loss(Layer):
    """Base of the loss layers: errors from the functional form are re-raised naming the layer
    (the message keeps the functional's name, the shapes and what was expected)."""

    def _run(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, IndexError) as e:
            if type(e) not in (ValueError, TypeError, IndexError):
                raise
            raise type(e)(f"{type(self).__name__}: {e}") from None


def _check_reduction(reduction, cls, allowed=("none", "mean", "sum")):
    if reduction not in allowed:
        raise ValueError(f"{cls}: 'reduction' should be one of "
                         f"{', '.join(map(repr, allowed))}, but received {reduction!r}")


class BCELoss(_Loss):
    """Binary cross entropy of probabilities (see :func:`F.binary_cross_entropy`).

    Args:
        weight (Tensor, optional): per-element rescaling weight.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Example:
        >>> loss = paddle.nn.BCELoss()(paddle.to_tensor([0.5]), paddle.to_tensor([1.]))
    """

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "BCELoss")
        self.weight = weight
        self.reduction = reduction
        self.name = name

    def forward(self, input, label):
        return self._run(F.binary_cross_entropy, input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy (see :func:`F.binary_cross_entropy_with_logits`).

    Args:
        weight (Tensor, optional): per-element rescaling weight.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
        pos_weight (Tensor, optional): weight of positive examples.
    """

    def __init__(self, weight=None, reduction="mean", pos_weight=None, name=None):
        super().__init__()
        _check_reduction(reduction, "BCEWithLogitsLoss")
        self.weight = weight
        self.reduction = reduction
        self.pos_weight = pos_weight
        self.name = name

    def forward(self, logit, label):
        return self._run(F.binary_cross_entropy_with_logits, logit, label, self.weight,
                         self.reduction, self.pos_weight)


class CrossEntropyLoss(_Loss):
    """Softmax cross entropy (see :func:`F.cross_entropy` for every option).

    Args:
        weight (Tensor, optional): per-class weights ``[C]``.
        ignore_index (int): hard-label value to ignore.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
        soft_label (bool): labels are distributions.
        axis (int): the class axis.
        use_softmax (bool): apply softmax to the input first.
        label_smoothing (float): label smoothing factor in ``[0, 1]``.
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", soft_label=False,
                 axis=-1, use_softmax=True, label_smoothing=0.0, name=None):
        super().__init__()
        _check_reduction(reduction, "CrossEntropyLoss")
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.soft_label = soft_label
        self.axis = axis
        self.use_softmax = use_softmax
        self.label_smoothing = label_smoothing
        self.name = name

    def forward(self, input, label):
        return self._run(F.cross_entropy, input, label, weight=self.weight,
                         ignore_index=self.ignore_index, reduction=self.reduction,
                         soft_label=self.soft_label, axis=self.axis,
                         use_softmax=self.use_softmax, label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """Negative log likelihood of log-probabilities (see :func:`F.nll_loss`).

    Args:
        weight (Tensor, optional): per-class weights ``[C]``.
        ignore_index (int): label value to ignore.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "NLLLoss")
        self._weight = weight
        self._ignore_index = ignore_index
        self._reduction = reduction
        self._name = name

    def forward(self, input, label):
        return self._run(F.nll_loss, input, label, self._weight, self._ignore_index,
                         self._reduction)


class MSELoss(_Loss):
    """Mean squared error (see :func:`F.mse_loss`).

    Args:
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, reduction="mean"):
        super().__init__()
        _check_reduction(reduction, "MSELoss")
        self.reduction = reduction

    def forward(self, input, label):
        return self._run(F.mse_loss, input, label, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (see :func:`F.l1_loss`).

    Args:
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "L1Loss")
        self.reduction = reduction
        self.name = name

    def forward(self, input, label):
        return self._run(F.l1_loss, input, label, self.reduction)


class SmoothL1Loss(_Loss):
    """Huber loss (see :func:`F.smooth_l1_loss`).

    Args:
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
        delta (float): end of the quadratic zone.
    """

    def __init__(self, reduction="mean", delta=1.0, name=None):
        super().__init__()
        _check_reduction(reduction, "SmoothL1Loss")
        self.reduction = reduction
        self.delta = delta
        self.name = name

    def forward(self, input, label):
        return self._run(F.smooth_l1_loss, input, label, self.reduction, self.delta)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence (see :func:`F.kl_div`).

    Args:
        reduction (str): ``'none'``, ``'batchmean'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, reduction="mean"):
        super().__init__()
        _check_reduction(reduction, "KLDivLoss", ("none", "batchmean", "mean", "sum"))
        self.reduction = reduction

    def forward(self, input, label):
        return self._run(F.kl_div, input, label, self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -label * (input - other) + margin)`` (see :func:`F.margin_ranking_loss`).

    Args:
        margin (float): the margin.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, margin=0.0, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "MarginRankingLoss")
        self.margin = margin
        self.reduction = reduction
        self.name = name

    def forward(self, input, other, label):
        return self._run(F.margin_ranking_loss, input, other, label, self.margin, self.reduction)


class HingeEmbeddingLoss(_Loss):
    """Hinge embedding loss (see :func:`F.hinge_embedding_loss`).

    Args:
        margin (float): margin for dissimilar pairs.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, margin=1.0, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "HingeEmbeddingLoss")
        self.margin = margin
        self.reduction = reduction
        self.name = name

    def forward(self, input, label):
        return self._run(F.hinge_embedding_loss, input, label, self.margin, self.reduction)


class CosineEmbeddingLoss(_Loss):
    """Cosine embedding loss (see :func:`F.cosine_embedding_loss`).

    Args:
        margin (float): margin in ``[-1, 1]`` for dissimilar pairs.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, margin=0, reduction="mean", name=None):
        super().__init__()
        if margin > 1 or margin < -1:
            raise ValueError(f"CosineEmbeddingLoss: 'margin' should be in [-1, 1], but "
                             f"received {margin}")
        _check_reduction(reduction, "CosineEmbeddingLoss")
        self.margin = margin
        self.reduction = reduction
        self.name = name

    def forward(self, input1, input2, label):
        return self._run(F.cosine_embedding_loss, input1, input2, label, self.margin,
                         self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-label * input))`` (see :func:`F.soft_margin_loss`).

    Args:
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "SoftMarginLoss")
        self.reduction = reduction
        self.name = name

    def forward(self, input, label):
        return self._run(F.soft_margin_loss, input, label, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Multi-label one-versus-all loss (see :func:`F.multi_label_soft_margin_loss`).

    Args:
        weight (Tensor, optional): per-class weights.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "MultiLabelSoftMarginLoss")
        self.weight = weight
        self.reduction = reduction
        self.name = name

    def forward(self, input, label):
        return self._run(F.multi_label_soft_margin_loss, input, label, self.weight, self.reduction)


class MultiMarginLoss(_Loss):
    """Multi-class hinge loss (see :func:`F.multi_margin_loss`).

    Args:
        p (int): 1 or 2.
        margin (float): the margin.
        weight (Tensor, optional): per-class weights ``[C]``.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, reduction="mean",
                 name=None):
        super().__init__()
        _check_reduction(reduction, "MultiMarginLoss")
        self.p = p
        self.margin = margin
        self.weight = weight
        self.reduction = reduction
        self.name = name

    def forward(self, input, label):
        return self._run(F.multi_margin_loss, input, label, p=self.p, margin=self.margin,
                         weight=self.weight, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (see :func:`F.poisson_nll_loss`).

    Args:
        log_input (bool): the input is a log rate.
        full (bool): add the Stirling term.
        epsilon (float): keeps the log finite when ``log_input`` is False.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, log_input=True, full=False, epsilon=1e-8, reduction="mean", name=None):
        super().__init__()
        if epsilon <= 0:
            raise ValueError(f"PoissonNLLLoss: 'epsilon' must be positive, but received "
                             f"{epsilon}")
        _check_reduction(reduction, "PoissonNLLLoss")
        # private, under Paddle's names
        self._log_input = log_input
        self._full = full
        self._epsilon = epsilon
        self._reduction = reduction
        self._name = name

    def forward(self, input, label):
        return self._run(F.poisson_nll_loss, input, label, self._log_input, self._full,
                         self._epsilon, self._reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood (see :func:`F.gaussian_nll_loss`).

    Args:
        full (bool): include the constant term.
        epsilon (float): lower bound of the variance.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, full=False, epsilon=1e-6, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "GaussianNLLLoss")
        self.full = full
        self.epsilon = epsilon
        self.reduction = reduction
        self.name = name

    def forward(self, input, label, variance):
        return self._run(F.gaussian_nll_loss, input, label, variance, self.full, self.epsilon,
                         self.reduction)


class TripletMarginLoss(_Loss):
    """Triplet margin loss with the p-norm distance (see :func:`F.triplet_margin_loss`).

    Args:
        margin (float): the margin.
        p (float): the norm degree.
        epsilon (float): added to differences before the norm.
        swap (bool): distance swap.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, margin=1.0, p=2.0, epsilon=1e-6, swap=False, reduction="mean",
                 name=None):
        super().__init__()
        _check_reduction(reduction, "TripletMarginLoss")
        self.margin = margin
        self.p = p
        self.epsilon = epsilon
        self.swap = swap
        self.reduction = reduction
        self.name = name

    def forward(self, input, positive, negative):
        return self._run(F.triplet_margin_loss, input, positive, negative, margin=self.margin,
                         p=self.p, epsilon=self.epsilon, swap=self.swap,
                         reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet margin loss with a custom distance
    (see :func:`F.triplet_margin_with_distance_loss`).

    Args:
        distance_function (callable, optional): the distance (default: pairwise distance).
        margin (float): the margin.
        swap (bool): distance swap.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, distance_function=None, margin=1.0, swap=False,
                 reduction: str = "mean", name=None):
        super().__init__()
        _check_reduction(reduction, "TripletMarginWithDistanceLoss")
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap
        self.reduction = reduction
        self.name = name

    def forward(self, input, positive, negative):
        return self._run(F.triplet_margin_with_distance_loss, input, positive, negative,
                         distance_function=self.distance_function, margin=self.margin,
                         swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist Temporal Classification loss (see :func:`F.ctc_loss`).

    Args:
        blank (int): the blank class id.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, blank=0, reduction="mean"):
        super().__init__()
        _check_reduction(reduction, "CTCLoss")
        self.blank = blank
        self.reduction = reduction

    def forward(self, log_probs, labels, input_lengths, label_lengths, norm_by_times=False):
        return self._run(F.ctc_loss, log_probs, labels, input_lengths, label_lengths,
                         self.blank, self.reduction, norm_by_times=norm_by_times)


class RNNTLoss(_Loss):
    """RNN-Transducer loss (see :func:`F.rnnt_loss`).

    Args:
        blank (int): the blank id.
        fastemit_lambda (float): FastEmit regularisation.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
    """

    def __init__(self, blank=0, fastemit_lambda=0.001, reduction="mean", name=None):
        super().__init__()
        _check_reduction(reduction, "RNNTLoss")
        self.blank = blank
        self.reduction = reduction
        self.fastemit_lambda = fastemit_lambda
        self.name = name

    def forward(self, input, label, input_lengths, label_lengths):
        return self._run(F.rnnt_loss, input, label, input_lengths, label_lengths,
                         blank=self.blank, fastemit_lambda=self.fastemit_lambda,
                         reduction=self.reduction)


class HSigmoidLoss(_Loss):
    """Hierarchical sigmoid loss with learnable node weights (see :func:`F.hsigmoid_loss`).

    Parameters: ``weight`` ``[num_classes - 1, feature_size]`` (``[num_classes, ...]`` with a
    custom tree) and ``bias`` ``[num_classes - 1, 1]``.

    Args:
        feature_size (int): input feature size.
        num_classes (int): number of classes (>= 2).
        weight_attr (ParamAttr, optional): weight attribute.
        bias_attr (ParamAttr|bool, optional): bias attribute; False for no bias.
        is_custom (bool): the tree is given per call by ``path_table`` / ``path_code``.
        is_sparse (bool): accepted for compatibility (gradients are dense).
    """

    def __init__(self, feature_size, num_classes, weight_attr=None, bias_attr=None,
                 is_custom=False, is_sparse=False, name=None):
        super().__init__()
        if num_classes < 2 and not is_custom:
            raise ValueError(f"HSigmoidLoss: 'num_classes' must not be less than 2 with the "
                             f"default tree, but received {num_classes}")
        self._feature_size = feature_size
        self._num_classes = num_classes
        self._is_custom = is_custom
        self._is_sparse = is_sparse
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._name = name
        self._dtype = get_default_dtype()
        rows = num_classes if is_custom else num_classes - 1
        self.weight = self.create_parameter([rows, feature_size], attr=weight_attr,
                                            dtype=self._dtype, is_bias=False)
        self.bias = self.create_parameter([rows, 1], attr=bias_attr, dtype=self._dtype,
                                          is_bias=True)

    def forward(self, input, label, path_table=None, path_code=None):
        return self._run(F.hsigmoid_loss, input, label, self._num_classes, self.weight,
                         self.bias, path_table=path_table, path_code=path_code,
                         is_sparse=self._is_sparse)
