"""paddle.Model: prepare / fit / evaluate / predict around a network, as Paddle 2.6's hapi."""

from __future__ import annotations

import inspect
import math
import numbers
import os
import re
import tempfile
import time
import warnings

import numpy as np

from .. import backend
from ..framework import state
from ..framework.tensor import Tensor, _wrap, to_array
from ..io import DataLoader, Dataset, DistributedBatchSampler
from ..metric import Metric
from ..nn.layer.layers import Layer
from ..static import InputSpec
from .callbacks import Callback, config_callbacks

__all__ = []


def _to_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _flatten(data):
    if isinstance(data, (list, tuple)):
        out = []
        for d in data:
            out.extend(_flatten(d)) if isinstance(d, (list, tuple)) else out.append(d)
        return out
    return [data]


def _to_tensor(x):
    if isinstance(x, Tensor):
        return x
    return _wrap(to_array(x, where="Model"))


def _np(x):
    # the raw array, not Tensor.numpy()'s copy: this runs on every batch of fit/evaluate
    return backend.to_numpy(x._data) if isinstance(x, Tensor) else np.asarray(x)


class _History(Callback):
    """Records per-step and per-epoch logs with the learning rate and wall time."""

    def __init__(self, model):
        super().__init__()
        self._m = model

    def on_train_begin(self, logs=None):
        self._m.history = {"step": [], "epoch": [], "eval": []}
        self._t0 = time.perf_counter()
        self._epoch = 0
        self._step = 0

    def _lr(self):
        opt = self._m._optimizer
        return opt.get_lr() if opt is not None else None

    def _clean(self, logs):
        out = {}
        for k, v in (logs or {}).items():
            if k == "batch_size":
                continue
            if isinstance(v, (list, tuple)) and len(v) == 1:
                v = v[0]
            if isinstance(v, np.ndarray) and v.size == 1:
                v = v.reshape(())
            if isinstance(v, (np.ndarray, np.generic)):
                v = v.tolist()
            out[k] = v
        return out

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, step, logs=None):
        self._step += 1
        rec = self._clean(logs)
        rec.update(epoch=self._epoch, global_step=self._step, lr=self._lr(),
                   time=time.perf_counter() - self._t0)
        self._m.history["step"].append(rec)

    def on_epoch_end(self, epoch, logs=None):
        rec = self._clean(logs)
        rec.update(epoch=epoch, lr=self._lr(), time=time.perf_counter() - self._t0)
        self._m.history["epoch"].append(rec)

    def on_eval_end(self, logs=None):
        if getattr(self._m, "history", None) is not None and self._m._training_now:
            rec = self._clean(logs)
            rec.update(epoch=self._epoch, time=time.perf_counter() - self._t0)
            self._m.history["eval"].append(rec)


class Model:
    """A network with its training configuration.

    Args:
        network (Layer): the model.
        inputs (InputSpec|list, optional): input specs (used by summary and save).
        labels (InputSpec|list, optional): label specs.

    Example:
        >>> model = paddle.Model(paddle.vision.models.LeNet())
        >>> model.prepare(paddle.optimizer.Adam(parameters=model.parameters()),
        ...               paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
        >>> model.fit(train_dataset, epochs=2, batch_size=64)
    """

    def __init__(self, network, inputs=None, labels=None):
        if not isinstance(network, Layer):
            raise TypeError(f"Model: network must be a paddle.nn.Layer, got "
                            f"{type(network).__name__}")
        self.network = network
        self._inputs_given = inputs is not None
        self._inputs = self._verify_spec(inputs, is_input=True)
        self._labels = self._verify_spec(labels)
        self._loss = None
        self._metrics = []
        self._optimizer = None
        self._amp_level = "O0"
        self._amp_configs = {}
        self._scaler = None
        self._forwarded = False
        self.stop_training = False
        self.history = None
        self._training_now = False

    # ------------------------------------------------------------------ configuration
    def _verify_spec(self, specs, is_input=False):
        if specs is None:
            if not is_input:
                return []
            sig = inspect.signature(self.network.forward)
            names = [p.name for p in sig.parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            return [InputSpec([None], name=n) for n in names] or [InputSpec([None])]
        if isinstance(specs, dict):
            specs = list(specs.values())
        specs = _to_list(specs)
        for s in specs:
            if not isinstance(s, InputSpec):
                raise TypeError(f"Model: inputs/labels must be InputSpec objects, got "
                                f"{type(s).__name__}")
        return specs

    def prepare(self, optimizer=None, loss=None, metrics=None, amp_configs=None):
        """Set the optimizer, the loss (a Layer or callable) and the metrics."""
        self._optimizer = optimizer
        if loss is not None and not isinstance(loss, Layer) and not callable(loss):
            raise TypeError("'loss' must be sub classes of `paddle.nn.Layer` or any callable "
                            "function.")
        self._loss = loss
        metrics = metrics or []
        for m in _to_list(metrics):
            assert isinstance(m, Metric), \
                f"{type(m).__name__} is not sub class of paddle.metric.Metric"
        self._metrics = _to_list(metrics)
        self._prepare_amp(amp_configs)
        self._prepare_data_parallel()

    def _prepare_data_parallel(self):
        """Under a launcher with several processes, train data parallel: the network is
        wrapped in DataParallel (rank 0's weights are broadcast), the loaders shard the data
        with a DistributedBatchSampler, metrics are computed on every rank's outputs, and only
        rank 0 logs and saves."""
        from .. import distributed as dist

        if dist.get_world_size() <= 1 or getattr(self, "_dp", None) is not None:
            return
        dist.init_parallel_env()
        self._dp = dist.DataParallel(self.network)

    def _prepare_amp(self, amp_configs):
        """Parse ``amp_configs`` (None, 'O0'|'O1'|'O2' or a dict) as Paddle 2.6 does."""
        if amp_configs is None:
            self._amp_level, self._amp_configs = "O0", {}
            return
        if isinstance(amp_configs, str):
            amp_configs = {"level": amp_configs}
        if not isinstance(amp_configs, dict):
            raise TypeError(f"amp_configs must be None, a str or a dict, got "
                            f"{type(amp_configs).__name__}")
        cfg = dict(amp_configs)
        level = cfg.pop("level", "O1")
        if level not in ("O0", "O1", "O2"):
            raise ValueError("amp_level must be 'O0', 'O1' or 'O2' in dygraph mode, got "
                             f"{level!r}")
        if "use_pure_fp16" in cfg:
            raise ValueError("'use_pure_fp16' is an invalid parameter, the level of mixed "
                             "precision training only depends on 'O1' or 'O2'.")
        if "use_fp16_guard" in cfg:
            raise ValueError("'use_fp16_guard' is supported in static graph mode only.")
        allowed = {"init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps",
                   "decr_every_n_nan_or_inf", "use_dynamic_loss_scaling", "custom_white_list",
                   "custom_black_list", "dtype"}
        unknown = set(cfg) - allowed
        if unknown:
            raise ValueError(f"Unsupported keys in amp_configs: {sorted(unknown)}; expected "
                             f"{sorted(allowed)}")
        self._amp_level, self._amp_configs = level, cfg
        if level == "O0":
            return
        from .. import amp

        scaler_keys = {"init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps",
                       "decr_every_n_nan_or_inf", "use_dynamic_loss_scaling"}
        self._scaler = amp.GradScaler(**{k: v for k, v in cfg.items() if k in scaler_keys})
        if level == "O2":
            clip = getattr(self._optimizer, "_grad_clip", None)
            from ..nn.clip import ClipGradByGlobalNorm, ClipGradByNorm

            assert clip is None or isinstance(clip, (ClipGradByGlobalNorm, ClipGradByNorm)), \
                "Only ClipGradByNorm and ClipGradByGlobalNorm are supported with amp level O2"
            self.network, self._optimizer = amp.decorate(
                self.network, self._optimizer, level="O2", dtype=cfg.get("dtype", "float16"))

    def _amp_context(self):
        if self._amp_level == "O0":
            import contextlib

            return contextlib.nullcontext()
        from .. import amp

        return amp.auto_cast(enable=True, custom_white_list=self._amp_configs.get(
            "custom_white_list"), custom_black_list=self._amp_configs.get("custom_black_list"),
            level=self._amp_level, dtype=self._amp_configs.get("dtype", "float16"))

    def parameters(self, *args, **kwargs):
        """The network's parameters."""
        return self.network.parameters(*args, **kwargs)

    def _metrics_name(self):
        names = ["loss"] if self._loss else []
        for m in self._metrics:
            names.extend(_to_list(m.name()))
        return names

    # ------------------------------------------------------------------ one batch
    def _forward(self, inputs):
        inputs = [_to_tensor(x) for x in _to_list(inputs)]
        dp = getattr(self, "_dp", None)
        outputs = (self.network if dp is None else dp)(*inputs)
        if not self._forwarded:
            # the shapes of the first batch seen, for save(training=False) without 'inputs'
            # (the batch axis left free, as Paddle derives it)
            self._seen_specs = [([-1] + list(x.shape[1:]), x.dtype) for x in inputs]
        self._forwarded = True
        return _to_list(outputs)

    def _compute_loss(self, outputs, labels):
        try:
            losses = self._loss(*(outputs + labels))
        except (ValueError, TypeError, IndexError) as e:
            shapes_o = [list(o.shape) for o in outputs if isinstance(o, Tensor)]
            shapes_l = [list(lb.shape) for lb in labels if isinstance(lb, Tensor)]
            raise type(e)(f"Model: the loss could not be computed from the network outputs "
                          f"(shapes {shapes_o}) and the labels (shapes {shapes_l}): {e}") \
                from e
        return _to_list(losses)

    def _update_metrics(self, outputs, labels):
        res = []
        if self._metrics and getattr(self, "_dp", None) is not None:
            outputs, labels = self._gather_for_metrics(outputs, labels)
        for m in self._metrics:
            outs = _to_list(m.compute(*(outputs + labels)))
            res.append(m.update(*[_np(o) for o in outs]))
        return res

    def _logs_here(self):
        """False on the ranks other than 0 of a data-parallel run (rank 0 alone logs)."""
        if getattr(self, "_dp", None) is None or self._dp._reducer is None:
            return True
        from .. import distributed as dist

        return dist.get_rank() == 0

    def _gather_predictions(self, outputs, total):
        """Every rank's predictions, batch by batch, cut to the dataset's ``total`` samples
        (the sampler repeats a few at the end to even out the ranks)."""
        from .. import distributed as dist

        gathered = []
        for batch in outputs:
            row = []
            for o in batch:
                parts = []
                dist.all_gather(parts, _wrap(np.ascontiguousarray(o)))
                row.append(np.concatenate([p.numpy() for p in parts], axis=0))
            n = len(row[0]) if row else 0
            if total is not None and n > total:
                row = [o[:total] for o in row]
                n = total
            if total is not None:
                total -= n
            gathered.append(row)
        return gathered

    def _gather_for_metrics(self, outputs, labels):
        """Every rank's outputs and labels, so the metrics are the global ones on every rank.
        The last batch is cut by as many samples as a DistributedBatchSampler repeated to
        even out the ranks (exactly those samples when the data is not shuffled)."""
        from .. import distributed as dist
        from ..tensor.manipulation import concat

        def gather(t):
            if not isinstance(t, Tensor):
                return t
            parts = []
            dist.all_gather(parts, t)
            return concat(parts, axis=0)

        outputs = [gather(o) for o in outputs]
        labels = [gather(lb) for lb in labels]
        left = getattr(self, "_dp_samples_left", None)
        if left is not None and outputs and isinstance(outputs[0], Tensor):
            n = outputs[0].shape[0] if outputs[0].shape else 1
            if n > left:
                outputs = [o[:left] if isinstance(o, Tensor) else o for o in outputs]
                labels = [lb[:left] if isinstance(lb, Tensor) else lb for lb in labels]
                n = left
            self._dp_samples_left = left - n
        return outputs, labels

    def train_batch(self, inputs, labels=None, update=True):
        """One training step; returns the losses (and metrics when set) as NumPy values."""
        if self._optimizer is None or self._loss is None:
            raise RuntimeError("Model.train_batch: call prepare(optimizer, loss) first")
        self.network.train()
        labels = [_to_tensor(x) for x in _to_list(labels)]
        with self._amp_context():
            outputs = self._forward(inputs)
            losses = self._compute_loss(outputs, labels)
            final = losses[0] if len(losses) == 1 else sum(losses[1:], losses[0])
        if self._scaler is not None and self._scaler.is_enable():
            self._scaler.scale(final).backward()
            if update:
                self._scaler.minimize(self._optimizer, final)
                self._optimizer.clear_grad()
        else:
            final.backward()
            if update:
                self._optimizer.step()
                self._optimizer.clear_grad()
        metrics = self._update_metrics(outputs, labels)
        loss_np = [_np(loss) for loss in losses]
        return (loss_np, metrics) if self._metrics else loss_np

    def eval_batch(self, inputs, labels=None):
        """One evaluation step (no gradients); returns losses and/or metrics."""
        self.network.eval()
        labels = [_to_tensor(x) for x in _to_list(labels)]
        with state.no_grad():
            with self._amp_context():
                outputs = self._forward(inputs)
                losses = self._compute_loss(outputs, labels) if self._loss else []
            metrics = self._update_metrics(outputs, labels)
        loss_np = [_np(loss) for loss in losses]
        if self._metrics and self._loss:
            return loss_np, metrics
        return metrics if self._metrics else loss_np

    def predict_batch(self, inputs):
        """The network's outputs for one batch, as NumPy arrays."""
        self.network.eval()
        with state.no_grad():
            with self._amp_context():
                outputs = self._forward(inputs)
        return [_np(o) for o in outputs]

    # ------------------------------------------------------------------ loops
    def _loader(self, data, batch_size, shuffle, drop_last, num_workers):
        if data is None:
            return None
        if isinstance(data, DataLoader):
            return data
        if not isinstance(data, Dataset):
            # as in Paddle, anything else is taken as the batches themselves: a list of
            # (inputs..., labels...) tuples of NumPy arrays or Tensors, a generator, a reader
            if isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
                raise TypeError(f"Model: data must be a paddle.io.Dataset, a DataLoader or an "
                                f"iterable of batches, got {type(data).__name__}")
            return data
        from ..io import IterableDataset

        if isinstance(data, IterableDataset):
            return DataLoader(data, batch_size=batch_size, num_workers=num_workers,
                              drop_last=drop_last)
        sampler = DistributedBatchSampler(data, batch_size=batch_size, shuffle=shuffle,
                                          drop_last=drop_last)
        return DataLoader(data, batch_sampler=sampler, num_workers=num_workers)

    @staticmethod
    def _len(loader):
        try:
            return len(loader)
        except TypeError:
            return None

    def _split(self, data, mode):
        data = _flatten(data)
        n = len(self._inputs)
        if mode == "predict":
            return data[:n], []
        return data[:n], data[n:]

    def _run_one_epoch(self, loader, cbks, mode, logs, num_iters=None, epoch=None):
        steps = self._len(loader)
        sampler = getattr(loader, "batch_sampler", None)
        self._dp_samples_left = len(sampler.dataset) if isinstance(
            sampler, DistributedBatchSampler) and sampler.nranks > 1 else None
        outputs = []
        total_steps = 0
        for step, data in enumerate(loader):
            if num_iters is not None and step >= num_iters:
                break
            cbks.on_batch_begin(mode, step, logs)
            ins, labels = self._split(data, mode)
            bs = ins[0].shape[0] if ins and hasattr(ins[0], "shape") and ins[0].shape else 1
            if mode == "train":
                update = (step + 1) % self._accumulate == 0 or (
                    steps is not None and step + 1 == steps)
                res = self.train_batch(ins, labels, update=update)
            elif mode == "eval":
                res = self.eval_batch(ins, labels)
            else:
                outputs.append(self.predict_batch(ins))
                res = None
            if mode != "predict":
                losses, metrics = (res if self._metrics and self._loss else
                                   ((res, []) if self._loss else ([], res)))
                if self._loss:
                    logs["loss"] = [float(np.asarray(loss).reshape(-1)[0]) for loss in losses]
                    if mode == "train":
                        self._check_finite(logs["loss"], epoch, step, cbks)
                for m in self._metrics:
                    val = m.accumulate()
                    names = _to_list(m.name())
                    vals = _to_list(val) if len(names) > 1 else [val]
                    for nm, v in zip(names, vals):
                        logs[nm] = v
            logs["step"] = step
            logs["batch_size"] = bs
            cbks.on_batch_end(mode, step, logs)
            total_steps += 1
        if mode != "predict":
            for m in self._metrics:
                m.reset()
        return (logs, outputs) if mode == "predict" else logs

    def _check_finite(self, losses, epoch, step, cbks):
        if all(math.isfinite(v) for v in losses):
            return
        if any(getattr(c, "handles_nan", False) for c in cbks):
            return
        raise FloatingPointError(
            f"Model.fit: the loss is {losses} at epoch {epoch}, step {step}: training "
            "diverged (lower the learning rate, check the inputs, or add a callback with "
            "handles_nan = True to deal with it yourself)")

    def fit(self, train_data=None, eval_data=None, batch_size=1, epochs=1, eval_freq=1,
            log_freq=10, save_dir=None, save_freq=1, verbose=2, drop_last=False, shuffle=True,
            num_workers=0, callbacks=None, accumulate_grad_batches=1, num_iters=None):
        """Train for ``epochs`` epochs, evaluating every ``eval_freq`` epochs and saving every
        ``save_freq`` epochs to ``save_dir``. The per-step and per-epoch logs are kept in
        ``model.history``."""
        assert train_data is not None, "train_data must be given!"
        if self._optimizer is None or self._loss is None:
            raise RuntimeError("Model.fit: call prepare(optimizer, loss, ...) before fit")
        if save_dir is not None:
            _check_writable(save_dir)
        if isinstance(batch_size, (tuple, list)):
            train_bs, eval_bs = batch_size
        else:
            train_bs = eval_bs = batch_size
        train_loader = self._loader(train_data, train_bs, shuffle, drop_last, num_workers)
        eval_loader = self._loader(eval_data, eval_bs, False, False, num_workers)
        self._accumulate = max(1, int(accumulate_grad_batches))
        steps = self._len(train_loader)
        if num_iters is not None:
            if not isinstance(num_iters, numbers.Integral) or num_iters <= 0:
                raise ValueError(f"Model.fit: num_iters must be a positive int, got "
                                 f"{num_iters!r}")
            if steps:
                epochs = min(epochs, math.ceil(num_iters / steps))
        user = _to_list(callbacks)
        if eval_loader is None and any(type(c).__name__ == "EarlyStopping" for c in user):
            warnings.warn("EarlyStopping needs validation data.", stacklevel=2)
        if not self._logs_here():  # data parallel: rank 0 alone logs and saves
            verbose, save_dir = 0, None
        if os.environ.get("PADDLE_HL_PROGRESS_REPORT"):
            # spawned from a notebook: the parent draws every rank's progress
            from ..distributed._progress import RankReporter

            user, verbose = user + [RankReporter()], 0
        cbks = config_callbacks(user + [_History(self)], model=self, epochs=epochs,
                                steps=steps if num_iters is None else min(
                                    steps or num_iters, num_iters),
                                log_freq=log_freq, save_freq=save_freq, save_dir=save_dir,
                                verbose=verbose, metrics=self._metrics_name())
        self.stop_training = False
        self._training_now = True
        remaining = num_iters
        cbks.on_begin("train")
        logs = {}
        try:
            for epoch in range(epochs):
                cbks.on_epoch_begin(epoch)
                logs = self._run_one_epoch(train_loader, cbks, "train", {}, remaining, epoch)
                if remaining is not None:
                    remaining -= (logs.get("step", -1) + 1)
                cbks.on_epoch_end(epoch, logs)
                if eval_loader is not None and (epoch + 1) % eval_freq == 0:
                    self._evaluate_loader(eval_loader, cbks)
                if self.stop_training or (remaining is not None and remaining <= 0):
                    break
            cbks.on_end("train", logs)
        finally:
            self._training_now = False

    def _evaluate_loader(self, loader, cbks, num_iters=None):
        n = self._len(loader)
        cbks.on_begin("eval", {"steps": n if num_iters is None else min(n or num_iters,
                                                                        num_iters),
                               "metrics": self._metrics_name()})
        logs = self._run_one_epoch(loader, cbks, "eval", {}, num_iters)
        cbks.on_end("eval", logs)
        return logs

    def evaluate(self, eval_data, batch_size=1, log_freq=10, verbose=2, num_workers=0,
                 callbacks=None, num_iters=None):
        """Evaluate; returns ``{'loss': [...], metric_name: value, ...}``."""
        loader = self._loader(eval_data, batch_size, False, False, num_workers)
        cbks = config_callbacks(callbacks, model=self, log_freq=log_freq,
                                verbose=verbose if self._logs_here() else 0,
                                metrics=self._metrics_name())
        logs = self._evaluate_loader(loader, cbks, num_iters)
        out = {}
        if self._loss:
            out["loss"] = logs.get("loss", [])
        for name in self._metrics_name():
            if name != "loss":
                out[name] = logs.get(name)
        return out

    def predict(self, test_data, batch_size=1, num_workers=0, stack_outputs=False, verbose=1,
                callbacks=None):
        """Run the network over ``test_data``; returns one list per output of per-batch arrays
        (or one stacked array per output with ``stack_outputs``)."""
        loader = self._loader(test_data, batch_size, False, False, num_workers)
        cbks = config_callbacks(callbacks, model=self,
                                verbose=verbose if self._logs_here() else 0, metrics=[],
                                mode="test")
        cbks.on_begin("predict", {"steps": self._len(loader)})
        logs, outputs = self._run_one_epoch(loader, cbks, "predict", {})
        cbks.on_end("predict", logs)
        sampler = getattr(loader, "batch_sampler", None)
        if getattr(self, "_dp", None) is not None and self._dp._reducer is not None:
            # data parallel: every rank returns the predictions of the whole dataset
            outputs = self._gather_predictions(outputs, len(sampler.dataset) if isinstance(
                sampler, DistributedBatchSampler) else None)
        outs = [list(o) for o in zip(*outputs)] if outputs else []
        if stack_outputs:
            outs = [np.vstack(o) for o in outs]
        return outs

    def lr_find(self, train_data, batch_size=64, start_lr=1e-7, end_lr=10.0, num_iters=100,
                **kwargs):
        """The learning rate range test (a paddle_hl extra, not in Paddle): train briefly with
        an exponentially growing learning rate, stop when the smoothed loss diverges, restore
        the model and optimizer exactly, show the loss curve with the suggested rate and its
        reason, and return the suggestion. ``self.lr_find_result`` keeps the whole curve.
        See :func:`paddle_hl.notebook.lr_find` for the arguments (``smooth``, ``diverge``,
        ``rule``, ``shuffle``, ``num_workers``, ``show``).

        Returns:
            float: the suggested learning rate.
        """
        from .lr_range import lr_find

        self.lr_find_result = lr_find(self, train_data, batch_size=batch_size,
                                      start_lr=start_lr, end_lr=end_lr, num_iters=num_iters,
                                      **kwargs)
        return self.lr_find_result.suggestion

    # ------------------------------------------------------------------ persistence
    def save(self, path, training=True):
        """Write ``path.pdparams`` (and ``path.pdopt`` when the optimizer has state). With
        ``training=False``, write an inference model as Paddle does: ``paddle.jit.save`` of the
        network for the Model's ``inputs`` (or the shapes of the batches it has run), i.e.
        ``path.pdmodel``, ``path.pdiparams`` and ``path.pdiparams.info``.

        The files are written as one checkpoint: all to temporaries first, then renamed into
        place, each ending with a shared save id after its pickle (real ``paddle.load`` reads
        the files unchanged); :meth:`load` reports a ``.pdparams``/``.pdopt`` pair from
        different saves instead of mixing them."""
        if not isinstance(path, str) or not path or os.path.basename(path) == "":
            raise ValueError(f"Model.save: path must be 'dirname/filename_prefix', got "
                             f"{path!r}")
        if int(os.environ.get("PADDLE_TRAINER_ID", "0")) != 0:
            return
        if not training:
            specified = any(s.shape != (-1,) for s in self._inputs)
            if not specified and not self._forwarded:
                raise RuntimeError("Saving inference model needs 'inputs' or running before "
                                   "saving. Please specify 'inputs' in Model initialization "
                                   "or input training data and perform a training for shape "
                                   "derivation.")
            from ..jit import save as jit_save
            from ..static import InputSpec

            specs = list(self._inputs) if specified else [
                InputSpec(shape, dtype) for shape, dtype in self._seen_specs]
            jit_save(self.network, path, input_spec=specs)
            return
        files = {".pdparams": self.network.state_dict()}
        if training and self._optimizer is not None:
            opt_state = self._optimizer.state_dict()
            if opt_state:
                files[".pdopt"] = opt_state
            if self._scaler is not None and self._scaler.is_enable():
                files[".pdscaler"] = self._scaler.state_dict()
        _save_together(files, path)

    def load(self, path, skip_mismatch=False, reset_optimizer=False):
        """Load ``path.pdparams`` (and ``path.pdopt`` unless ``reset_optimizer``).

        Raises:
            ValueError: ``path.pdparams`` is missing, or a parameter is missing or of another
                shape (unless ``skip_mismatch``).
            RuntimeError: ``.pdparams`` and ``.pdopt`` come from different saves (an
                interrupted save, or a later ``save(training=False)``); pass
                ``reset_optimizer=True`` to load the parameters alone.
        """
        from ..framework.io import load

        for suffix in (".pdparams", ".pdopt", ".pdmodel"):
            if path.endswith(suffix):
                path = path[:-len(suffix)]
                break
        if not os.path.exists(path + ".pdparams"):
            raise ValueError(f"Model.load: {path}.pdparams does not exist")
        params = load(path + ".pdparams", keep_name_table=True)
        saved_names = params.pop("StructuredToParameterName@@", {}) or {}
        own = self.network.state_dict()
        matched = {}
        for key, target in own.items():
            if key not in params:
                msg = f"Model.load: {key} is not found in the providing file."
                if not skip_mismatch:
                    raise ValueError(msg)
                warnings.warn(msg, stacklevel=2)
                continue
            value = params[key]
            shape = list(np.shape(value.numpy() if isinstance(value, Tensor) else value))
            if shape != target.shape:
                msg = (f"Model.load: {key} receives a shape {shape}, but the expected shape "
                       f"is {target.shape}.")
                if not skip_mismatch:
                    raise ValueError(msg)
                warnings.warn(msg, stacklevel=2)
                continue
            matched[key] = value
        self.network.set_state_dict(matched)
        if skip_mismatch:
            reset_optimizer = True
        if not reset_optimizer and self._optimizer is not None and \
                os.path.exists(path + ".pdopt"):
            save_id, opt_id = _save_id(path + ".pdparams"), _save_id(path + ".pdopt")
            if save_id != opt_id and (save_id is not None or opt_id is not None):
                raise RuntimeError(
                    f"Model.load: {path}.pdparams and {path}.pdopt come from different saves "
                    f"(save ids {save_id} and {opt_id}), e.g. an interrupted Model.save or a "
                    "later save with training=False; the optimizer state does not belong to "
                    "these parameters. Pass reset_optimizer=True to load the parameters alone.")
            opt_state = _rename_accumulators(load(path + ".pdopt"), saved_names, own)
            self._optimizer.set_state_dict(opt_state)
        if self._scaler is not None and os.path.exists(path + ".pdscaler"):
            self._scaler.load_state_dict(load(path + ".pdscaler"))

    def summary(self, input_size=None, dtype=None):
        """``paddle.summary`` of the network; input_size defaults to the input specs."""
        from .model_summary import summary

        if input_size is None:
            if not self._inputs_given or any(-1 in s.shape[1:] for s in self._inputs):
                raise ValueError("Model.summary: give input_size, or build the Model with "
                                 "inputs=InputSpec(...) that fix every dim but the batch")
            input_size = [tuple(1 if d == -1 else d for d in s.shape) for s in self._inputs]
            dtype = dtype or [s.dtype.name for s in self._inputs]
            if len(input_size) == 1:
                input_size, dtype = input_size[0], dtype[0]
        return summary(self.network, input_size, dtypes=dtype)


# The files of one Model.save end with this line and a shared id, after the pickle's STOP
# opcode: pickle.load (Paddle's and paddle_hl's) stops before it, so the files stay exactly
# what real paddle.load reads, and Model.load can tell whether two files belong together.
_SAVE_ID = b"\n#paddle_hl save id "
_SAVE_ID_RE = re.compile(rb"\n#paddle_hl save id ([0-9a-f]{32})\n\Z")


def _save_id(path):
    """The save id at the end of a file written by :func:`_save_together`, else None."""
    try:
        with open(path, "rb") as f:
            f.seek(max(os.path.getsize(path) - 64, 0))
            m = _SAVE_ID_RE.search(f.read())
    except OSError:
        return None
    return m.group(1).decode() if m else None


def _save_together(files, path):
    """Write ``path + suffix`` for every (suffix, state dict) of ``files`` as one checkpoint:
    all are pickled to temporaries first, then renamed into place one after the other. A save
    id after each file's pickle lets :meth:`Model.load` detect a pair from different saves (a
    crash between two renames, or a stale ``.pdopt`` beside newer parameters)."""
    import pickle
    import uuid

    from ..framework import io as _io

    save_id = uuid.uuid4().hex.encode()
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    written = []
    try:
        for suffix, obj in files.items():
            saved = _io._build_saved(obj)
            fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}{suffix}.",
                                       suffix=".tmp", dir=directory)
            written.append((tmp, path + suffix))
            with os.fdopen(fd, "wb") as f:
                pickle.dump(saved, f, protocol=4)
                f.write(_SAVE_ID + save_id + b"\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, _io._file_mode())
        # the parameters go last: a crash in between leaves old parameters with a new .pdopt,
        # which Model.load reports through the differing save ids
        for tmp, final in sorted(written, key=lambda w: w[1].endswith(".pdparams")):
            os.replace(tmp, final)
    finally:
        for tmp, _ in written:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _rename_accumulators(opt_state, saved_names, own):
    """Optimizer accumulators are keyed by parameter name (``linear_0.w_0_moment1_0``), which
    depends on how many layers the saving process had built. Map them to this network's
    parameter names through the structured names both checkpoints share."""
    renames = {}
    for key, old in saved_names.items():
        t = own.get(key)
        if t is not None and t.name != old:
            renames[old] = t.name
    if not renames:
        return opt_state
    out = {}
    for key, value in opt_state.items():
        new_key = key
        for old in sorted(renames, key=len, reverse=True):
            if key.startswith(old + "_"):
                new_key = renames[old] + key[len(old):]
                break
        if key == "master_weights" and isinstance(value, dict):
            value = {renames.get(k, k): v for k, v in value.items()}
        out[new_key] = value
    return out


def _check_writable(save_dir):
    """Fail before training, not after, when checkpoints could not be written."""
    try:
        os.makedirs(save_dir, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=save_dir, prefix=".write-test-"):
            pass
    except OSError as e:
        raise OSError(f"Model.fit: save_dir {save_dir!r} is not writable ({e}); fix it before "
                      "training") from e


def _all_gather(x):
    """Every rank's ``x`` concatenated along axis 0, in rank order (``x`` itself, copied, in a
    single process); metric code imports it from here to gather predictions."""
    from ..distributed import collective as _coll
    from ..tensor.manipulation import concat

    if not _coll.is_initialized() and _coll.env_world_size() == 1:
        return x.clone()
    out = []
    _coll.all_gather(out, x)
    return concat(out, axis=0)
