"""Callbacks of the high-level API: progress display, checkpoints, LR scheduling, early stop."""

from __future__ import annotations

import copy
import numbers
import os
import time
import warnings

import numpy as np

from ..optimizer.lr import LRScheduler as _LRScheduler

__all__ = []


def _rank0():
    return int(os.environ.get("PADDLE_TRAINER_ID", "0")) == 0


class Callback:
    """Base class: override the ``on_*`` hooks you need. ``self.model`` and ``self.params``
    (epochs, steps, verbose, metrics, ...) are set by the Model before training."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        """Called once before training."""

    def on_train_end(self, logs=None):
        """Called once after training."""

    def on_eval_begin(self, logs=None):
        """Called before evaluation."""

    def on_eval_end(self, logs=None):
        """Called after evaluation, with the evaluation results in ``logs``."""

    def on_predict_begin(self, logs=None):
        """Called before prediction."""

    def on_predict_end(self, logs=None):
        """Called after prediction."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of each training epoch."""

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of each training epoch."""

    def on_train_batch_begin(self, step, logs=None):
        """Called before each training step."""

    def on_train_batch_end(self, step, logs=None):
        """Called after each training step, with its loss and metrics in ``logs``."""

    def on_eval_batch_begin(self, step, logs=None):
        """Called before each evaluation step."""

    def on_eval_batch_end(self, step, logs=None):
        """Called after each evaluation step."""

    def on_predict_batch_begin(self, step, logs=None):
        """Called before each prediction step."""

    def on_predict_batch_end(self, step, logs=None):
        """Called after each prediction step."""


class CallbackList:
    """Dispatches every hook to a list of callbacks, in order."""

    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])
        self.params = {}
        self.model = None

    def append(self, callback):
        self.callbacks.append(callback)

    def __iter__(self):
        return iter(self.callbacks)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, name, *args):
        for c in self.callbacks:
            getattr(c, name)(*args)

    def on_begin(self, mode, logs=None):
        self._call(f"on_{mode}_begin", logs)

    def on_end(self, mode, logs=None):
        self._call(f"on_{mode}_end", logs)

    def on_epoch_begin(self, epoch=None, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch=None, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, mode, step=None, logs=None):
        self._call(f"on_{mode}_batch_begin", step, logs)

    def on_batch_end(self, mode, step=None, logs=None):
        self._call(f"on_{mode}_batch_end", step, logs)


def config_callbacks(callbacks=None, model=None, batch_size=None, epochs=None, steps=None,
                     log_freq=2, verbose=2, save_freq=1, save_dir=None, metrics=None,
                     mode="train"):
    """The CallbackList Model.fit/evaluate/predict use: ProgBarLogger first when verbose and
    none is given, then the user's callbacks, then ModelCheckpoint and LRScheduler."""
    cbks = list(callbacks or [])
    if not any(isinstance(k, ProgBarLogger) for k in cbks) and verbose:
        cbks = [ProgBarLogger(log_freq, verbose=verbose)] + cbks
    if not any(isinstance(k, ModelCheckpoint) for k in cbks):
        cbks = cbks + [ModelCheckpoint(save_freq, save_dir)]
    for k in cbks:
        if isinstance(k, EarlyStopping):
            k.save_dir = save_dir
    if not any(isinstance(k, LRScheduler) for k in cbks):
        cbks = cbks + [LRScheduler()]
    lst = CallbackList(cbks)
    lst.set_model(model)
    metrics = list(metrics or []) if mode != "test" else []
    lst.set_params({"batch_size": batch_size, "epochs": epochs, "steps": steps,
                    "verbose": verbose, "metrics": metrics})
    return lst


def _fmt(v):
    if isinstance(v, (list, tuple)):
        v = v[0] if len(v) == 1 else v
    if isinstance(v, (list, tuple)):
        return " ".join(_fmt(x) for x in v)
    if isinstance(v, np.ndarray):
        v = v.reshape(-1)
        if v.dtype == np.uint16:  # a bf16 loss stored as raw bits
            v = (v.astype(np.uint32) << 16).view(np.float32)
        v = v[0] if v.size == 1 else v
        if isinstance(v, np.ndarray):
            return " ".join(f"{x:.4f}" for x in v.tolist())
    if isinstance(v, (numbers.Number, np.generic)):
        return f"{float(v):.4f}"
    return str(v)


class ProgBarLogger(Callback):
    """Progress display: verbose 1 is a progress bar per epoch, 2 a log line every
    ``log_freq`` steps, 0 silent. In Jupyter it is a live widget with loss and metric curves.

    Args:
        log_freq (int): steps between log lines (verbose=2).
        verbose (int): 0, 1 or 2.
    """

    def __init__(self, log_freq=1, verbose=2):
        super().__init__()
        self.epochs = None
        self.steps = None
        self.log_freq = log_freq
        self.verbose = verbose
        self._display = None

    def _display_for(self):
        if self._display is None:
            from .progressbar import make_display

            self._display = make_display(self.verbose)
        return self._display

    def on_train_begin(self, logs=None):
        self.epochs = self.params.get("epochs")
        self.train_metrics = self.params.get("metrics", [])
        if self.verbose:
            self._display_for().train_begin(self.epochs, self.params)

    def on_epoch_begin(self, epoch=None, logs=None):
        self.steps = self.params.get("steps")
        self.epoch = epoch
        self.train_step = 0
        self._t0 = time.perf_counter()
        if self.verbose:
            self._display_for().epoch_begin(epoch, self.epochs, self.steps)

    def _items(self, logs, names):
        items = []
        for k in names:
            if k in logs:
                items.append((k, _fmt(logs[k])))
        return items

    def _progress(self, mode, step, logs, steps):
        per = (time.perf_counter() - self._t0) / max(step, 1)
        items = self._items(logs or {}, self._names(mode))
        self._display_for().update(mode, step, steps, items, per, logs or {},
                                   force=(step == steps))

    def _names(self, mode):
        if mode == "predict":
            return []
        if mode == "eval":
            return list(getattr(self, "eval_metrics", None) or self.params.get("metrics", []))
        return list(self.params.get("metrics", []))  # the Model's names start with "loss"

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        if self.verbose and (self.train_step % self.log_freq == 0 or
                             self.train_step == self.steps or self.verbose == 1):
            self._progress("train", self.train_step, logs, self.steps)

    def on_epoch_end(self, epoch, logs=None):
        if self.verbose:
            if self.train_step % self.log_freq != 0 and self.train_step != self.steps and \
                    self.verbose == 2:
                self._progress("train", self.train_step, logs, self.steps)
            self._display_for().epoch_end(epoch, logs or {})

    def on_eval_begin(self, logs=None):
        self.eval_steps = (logs or {}).get("steps")
        self.eval_metrics = (logs or {}).get("metrics", [])
        self.eval_step = 0
        self.evaled_samples = 0
        self._t0 = time.perf_counter()
        if self.verbose:
            self._display_for().phase_begin("eval", self.eval_steps)

    def on_eval_batch_end(self, step, logs=None):
        self.eval_step += 1
        self.evaled_samples += (logs or {}).get("batch_size", 0)
        if self.verbose and (self.eval_step % self.log_freq == 0 or
                             self.eval_step == self.eval_steps):
            if self.verbose == 2 or self.eval_step == self.eval_steps:
                self._progress("eval", self.eval_step, logs, self.eval_steps)

    def on_eval_end(self, logs=None):
        if self.verbose:
            self._display_for().phase_end("eval", self.evaled_samples, logs or {})

    def on_predict_begin(self, logs=None):
        self.test_steps = (logs or {}).get("steps")
        self.test_step = 0
        self.tested_samples = 0
        self._t0 = time.perf_counter()
        if self.verbose:
            self._display_for().phase_begin("predict", self.test_steps)

    def on_predict_batch_end(self, step, logs=None):
        self.test_step += 1
        self.tested_samples += (logs or {}).get("batch_size", 0)
        if self.verbose and (self.test_step % self.log_freq == 0 or
                             self.test_step == self.test_steps):
            self._progress("predict", self.test_step, logs, self.test_steps)

    def on_predict_end(self, logs=None):
        if self.verbose:
            self._display_for().phase_end("predict", self.tested_samples, logs or {})

    def on_train_end(self, logs=None):
        if self.verbose:
            self._display_for().train_end(logs or {})


class ModelCheckpoint(Callback):
    """Save the model into ``save_dir/{epoch}`` after every epoch whose index (counted from 0) is
    a multiple of ``save_freq`` (epochs 0, save_freq, 2 * save_freq, ...), and at the end of
    training into ``save_dir/final`` (``.pdparams``, plus ``.pdopt`` when the optimizer has
    state), as Paddle does."""

    def __init__(self, save_freq=1, save_dir=None):
        super().__init__()
        self.save_freq = save_freq
        self.save_dir = save_dir

    def on_epoch_begin(self, epoch=None, logs=None):
        self.epoch = epoch

    def _is_save(self):
        return self.model is not None and self.save_dir and _rank0()

    def on_epoch_end(self, epoch, logs=None):
        if self._is_save() and self.epoch % self.save_freq == 0:
            path = os.path.join(self.save_dir, str(epoch))
            print(f"save checkpoint at {os.path.abspath(path)}")
            self.model.save(path)

    def on_train_end(self, logs=None):
        if self._is_save():
            path = os.path.join(self.save_dir, "final")
            print(f"save checkpoint at {os.path.abspath(path)}")
            self.model.save(path)


class LRScheduler(Callback):
    """Step the optimizer's LRScheduler after every batch (``by_step``) or epoch
    (``by_epoch``)."""

    def __init__(self, by_step=True, by_epoch=False):
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("LRScheduler: by_step and by_epoch cannot both be True")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def _scheduler(self):
        opt = getattr(self.model, "_optimizer", None)
        lr = getattr(opt, "_learning_rate", None)
        return lr if isinstance(lr, _LRScheduler) else None

    def on_epoch_end(self, epoch, logs=None):
        s = self._scheduler()
        if self.by_epoch and s is not None:
            s.step()

    def on_train_batch_end(self, step, logs=None):
        s = self._scheduler()
        if self.by_step and s is not None:
            s.step()


def _monitor_value(logs, key):
    v = logs.get(key)
    if isinstance(v, (list, tuple)):
        v = v[0]
    if isinstance(v, np.ndarray):
        v = v.reshape(-1)[0]
    return None if v is None else float(v)


class EarlyStopping(Callback):
    """Stop training when the monitored evaluation value stops improving.

    Args:
        monitor (str): 'loss' or a metric name.
        mode (str): 'auto', 'min' or 'max' (auto: max for names containing 'acc').
        patience (int): evaluations without improvement before stopping.
        min_delta (float): the smallest change that counts as improvement.
        baseline (float, optional): the value to beat.
        save_best_model (bool): save the best model to ``save_dir/best_model``.
        restore_best_weights (bool): keyword only, not in Paddle: at the end of training, put
            the weights of the best evaluation back into the network (a copy kept in memory,
            as Keras does), so the model left after ``fit`` is the best one rather than the
            last. Default False, Paddle's behaviour.

    Example:
        >>> stop = paddle.callbacks.EarlyStopping(monitor="loss", patience=2,
        ...                                       restore_best_weights=True)
        >>> model.fit(train, eval_data=val, epochs=50, callbacks=[stop])  # doctest: +SKIP
    """

    def __init__(self, monitor="loss", mode="auto", patience=0, verbose=1, min_delta=0,
                 baseline=None, save_best_model=True, *, restore_best_weights=False):
        super().__init__()
        self.restore_best_weights = bool(restore_best_weights)
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.wait_epoch = 0
        self.best_weights = None
        self.stopped_epoch = 0
        self.save_best_model = save_best_model
        self.save_dir = None
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.",
                          stacklevel=2)
            mode = "auto"
        if mode == "min" or (mode == "auto" and "acc" not in monitor):
            self.monitor_op, self.min_delta = np.less, -self.min_delta
        else:
            self.monitor_op = np.greater

    def on_train_begin(self, logs=None):
        self.wait_epoch = 0
        if self.baseline is not None:
            self.best_value = self.baseline
        else:
            self.best_value = np.inf if self.monitor_op == np.less else -np.inf
            self.best_weights = None

    def on_eval_end(self, logs=None):
        if logs is None or self.monitor not in logs:
            warnings.warn(f"Monitor of EarlyStopping should be loss or metric name; "
                          f"{self.monitor!r} is not in the evaluation logs", stacklevel=2)
            return
        current = _monitor_value(logs, self.monitor)
        if self.monitor_op(current - self.min_delta, self.best_value):
            self.best_value = current
            self.wait_epoch = 0
            if self.restore_best_weights:
                self.best_weights = {k: v.numpy().copy()
                                     for k, v in self.model.network.state_dict().items()}
            if self.save_best_model and self.save_dir is not None and _rank0():
                path = os.path.join(self.save_dir, "best_model")
                self.model.save(path)
        else:
            self.wait_epoch += 1
        if self.wait_epoch >= self.patience:
            self.model.stop_training = True
            if self.verbose > 0:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.")
                if self.save_best_model and self.save_dir is not None:
                    print(f"Best checkpoint has been saved at "
                          f"{os.path.abspath(os.path.join(self.save_dir, 'best_model'))}")
        self.stopped_epoch += 1

    def on_train_end(self, logs=None):
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring the weights of the best evaluation ({self.monitor} = "
                      f"{self.best_value}).")
            self.model.network.set_state_dict(self.best_weights)


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` when the monitored value plateaus.

    Works with a float learning rate; with an LRScheduler it warns and does nothing (as Paddle).
    """

    def __init__(self, monitor="loss", factor=0.1, patience=10, verbose=1, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0):
        super().__init__()
        self.monitor = monitor
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0
        self.best = 0
        self.mode = mode
        self.epoch = 0
        self._reset()

    def _reset(self):
        if self.mode not in ("auto", "min", "max"):
            warnings.warn(f"Learning rate reduction mode {self.mode} is unknown, fallback to "
                          "auto mode.", stacklevel=2)
            self.mode = "auto"
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_eval_end(self, logs=None):
        if logs is None or self.monitor not in logs:
            warnings.warn(f"Monitor of ReduceLROnPlateau should be loss or metric name; "
                          f"{self.monitor!r} is not in the evaluation logs", stacklevel=2)
            return
        opt = self.model._optimizer
        if isinstance(opt._learning_rate, _LRScheduler):
            warnings.warn("ReduceLROnPlateau expects a float learning rate; the optimizer uses "
                          "an LRScheduler, so nothing is changed", stacklevel=2)
            return
        current = _monitor_value(logs, self.monitor)
        self.epoch += 1
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old = opt.get_lr()
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    opt.set_lr(new)
                    if self.verbose > 0 and _rank0():
                        # the leading newline ends the progress bar's line, as Paddle prints
                        print(f"\nEpoch {self.epoch}: ReduceLROnPlateau reducing learning rate "
                              f"to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class VisualDL(Callback):
    """Log losses and metrics to VisualDL (``pip install visualdl``)."""

    def __init__(self, log_dir):
        super().__init__()
        try:
            import visualdl  # noqa: F401
        except ImportError:
            raise ImportError("VisualDL callback needs the visualdl package: "
                              "pip install visualdl") from None
        self.log_dir = log_dir
        self.epochs = None
        self.steps = None
        self.epoch = 0
        self._writer = None
        self.train_step = 0

    def _writer_(self):
        if self._writer is None:
            from visualdl import LogWriter

            self._writer = LogWriter(self.log_dir)
        return self._writer

    def _log(self, tag, logs, step):
        for k, v in (logs or {}).items():
            if k in ("step", "batch_size"):
                continue
            try:
                val = float(np.asarray(v).reshape(-1)[0])
            except (TypeError, ValueError):
                continue
            self._writer_().add_scalar(tag=f"{tag}/{k}", step=step, value=val)

    def on_train_begin(self, logs=None):
        self.epochs = self.params.get("epochs")

    def on_epoch_begin(self, epoch=None, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        if _rank0():
            self._log("train", logs, self.train_step)

    def on_eval_begin(self, logs=None):
        self.eval_steps = (logs or {}).get("steps")

    def on_eval_end(self, logs=None):
        if _rank0():
            self._log("eval", logs, self.epoch)

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()


class WandbCallback(Callback):
    """Log losses and metrics to Weights & Biases (``pip install wandb``)."""

    def __init__(self, project=None, entity=None, name=None, dir=None, mode=None,  # noqa: A002
                 job_type=None, **kwargs):
        super().__init__()
        try:
            import wandb
        except ImportError:
            raise ImportError("WandbCallback needs the wandb package: pip install wandb") \
                from None
        self.wandb = wandb
        self.wandb_args = dict(project=project, entity=entity, name=name, dir=dir, mode=mode,
                               job_type=job_type, **kwargs)
        self._run = None
        self.train_step = 0
        self.epoch = 0

    @property
    def run(self):
        if self._run is None and _rank0():
            self._run = self.wandb.run or self.wandb.init(**self.wandb_args)
        return self._run

    def _log(self, prefix, logs, step):
        data = {}
        for k, v in (logs or {}).items():
            if k in ("step", "batch_size"):
                continue
            try:
                data[f"{prefix}/{k}"] = float(np.asarray(v).reshape(-1)[0])
            except (TypeError, ValueError):
                continue
        if self.run is not None:
            self.run.log(data, step=step)

    def on_train_begin(self, logs=None):
        if self.run is not None:
            self.run.config.update(copy.copy(self.params), allow_val_change=True)

    def on_epoch_begin(self, epoch=None, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        self._log("train", logs, self.train_step)

    def on_eval_begin(self, logs=None):
        pass

    def on_eval_end(self, logs=None):
        self._log("eval", logs, self.train_step)

    def on_train_end(self, logs=None):
        if self._run is not None:
            self._run.finish()
