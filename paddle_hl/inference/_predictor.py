"""Config, Predictor and the input/output handles of ``paddle.inference``."""

from __future__ import annotations

import enum
import os
import tempfile
import warnings

import numpy as np

from ..framework.tensor import Tensor

__all__ = []


class PrecisionType(enum.IntEnum):
    """Precision of a GPU/TensorRT engine (``Config.Precision``)."""

    Float32 = 0
    Int8 = 1
    Half = 2
    Bfloat16 = 3


class PlaceType(enum.IntEnum):
    """Where a handle's data lives."""

    UNK = -1
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM = 4


class DataType(enum.IntEnum):
    """Element type of a handle, as ``Tensor.type()`` reports it."""

    FLOAT32 = 0
    INT64 = 1
    INT32 = 2
    UINT8 = 3
    INT8 = 4
    FLOAT16 = 5
    BOOL = 6
    FLOAT64 = 7


_DTYPE_OF = {"float32": DataType.FLOAT32, "int64": DataType.INT64, "int32": DataType.INT32,
             "uint8": DataType.UINT8, "int8": DataType.INT8, "float16": DataType.FLOAT16,
             "bool": DataType.BOOL, "float64": DataType.FLOAT64}
_BYTES = {DataType.FLOAT32: 4, DataType.INT64: 8, DataType.INT32: 4, DataType.UINT8: 1,
          DataType.INT8: 1, DataType.FLOAT16: 2, DataType.BOOL: 1, DataType.FLOAT64: 8}
_WARNED: set = set()


def _warn_once(option: str, why: str) -> None:
    if option in _WARNED:
        return
    _WARNED.add(option)
    warnings.warn(f"paddle.inference.Config.{option}: {why}", UserWarning, stacklevel=3)


def get_version() -> str:
    """The version string of this inference library."""
    from .. import __hl_version__, __version__

    return f"version: {__version__} (paddle_hl {__hl_version__}, pure Python, no TensorRT)"


def get_num_bytes_of_data_type(dtype: DataType) -> int:
    """Bytes per element of a :class:`DataType`."""
    return _BYTES[DataType(dtype)]


def get_trt_compile_version() -> tuple:
    """TensorRT is not part of paddle_hl: ``(0, 0, 0)``."""
    return (0, 0, 0)


def get_trt_runtime_version() -> tuple:
    """TensorRT is not part of paddle_hl: ``(0, 0, 0)``."""
    return (0, 0, 0)


# Options that configure engines paddle_hl does not have. Each is accepted, warns once naming
# itself, and its query method keeps answering False: nothing pretends it took effect.
_NO_EFFECT = {
    "enable_tensorrt_engine": "TensorRT is not available in paddle_hl; the program runs on "
                              "paddle_hl's own kernels",
    "enable_tensorrt_dla": "TensorRT is not available in paddle_hl",
    "enable_tensorrt_varseqlen": "TensorRT is not available in paddle_hl",
    "enable_tensorrt_memory_optim": "TensorRT is not available in paddle_hl",
    "enable_tensorrt_inspector": "TensorRT is not available in paddle_hl",
    "enable_tensorrt_explicit_quantization": "TensorRT is not available in paddle_hl",
    "enable_tuned_tensorrt_dynamic_shape": "TensorRT is not available in paddle_hl",
    "set_trt_dynamic_shape_info": "TensorRT is not available in paddle_hl (free dims stay free "
                                  "without shape ranges)",
    "collect_shape_range_info": "no TensorRT shape ranges are collected in paddle_hl",
    "exp_disable_tensorrt_ops": "TensorRT is not available in paddle_hl",
    "set_tensorrt_optimization_level": "TensorRT is not available in paddle_hl",
    "enable_mkldnn": "oneDNN (MKLDNN) is not used by paddle_hl; CPU kernels are NumPy's",
    "enable_mkldnn_bfloat16": "oneDNN (MKLDNN) is not used by paddle_hl",
    "enable_mkldnn_int8": "oneDNN (MKLDNN) is not used by paddle_hl",
    "set_mkldnn_cache_capacity": "oneDNN (MKLDNN) is not used by paddle_hl",
    "set_mkldnn_op": "oneDNN (MKLDNN) is not used by paddle_hl",
    "set_bfloat16_op": "oneDNN (MKLDNN) is not used by paddle_hl",
    "disable_mkldnn_fc_passes": "oneDNN (MKLDNN) is not used by paddle_hl",
    "enable_xpu": "XPU devices are not supported by paddle_hl",
    "set_xpu_device_id": "XPU devices are not supported by paddle_hl",
    "set_xpu_config": "XPU devices are not supported by paddle_hl",
    "enable_ipu": "IPU devices are not supported by paddle_hl",
    "set_ipu_config": "IPU devices are not supported by paddle_hl",
    "set_ipu_custom_info": "IPU devices are not supported by paddle_hl",
    "load_ipu_config": "IPU devices are not supported by paddle_hl",
    "enable_custom_device": "custom devices are not supported by paddle_hl",
    "enable_lite_engine": "Paddle-Lite is not available in paddle_hl",
    "enable_onnxruntime": "ONNX Runtime is not used by paddle_hl",
    "enable_ort_optimization": "ONNX Runtime is not used by paddle_hl",
    "enable_opencl": "OpenCL is not supported by paddle_hl",
    "enable_dlnne": "DLNNE is not supported by paddle_hl",
    "enable_memory_optim": "paddle_hl does no memory-reuse analysis of programs (memory is "
                           "freed as each value goes out of use)",
    "enable_profile": "use paddle.profiler to profile a paddle_hl program",
    "enable_quantizer": "post-training quantization is not available in paddle_hl",
    "enable_low_precision_io": "paddle_hl keeps the program's input/output dtypes",
    "exp_enable_mixed_precision_ops": "paddle_hl runs the program in its saved precision",
    "exp_disable_mixed_precision_ops": "paddle_hl runs the program in its saved precision",
    "enable_save_optim_model": "paddle_hl does not optimise programs, so none is saved",
    "set_optim_cache_dir": "paddle_hl does not optimise programs, so nothing is cached",
    "delete_pass": "paddle_hl runs no IR passes",
    "exp_enable_use_cutlass": "CUTLASS is not used by paddle_hl",
    "set_dist_config": "distributed inference is not supported by paddle_hl",
}


def _no_effect(option):
    def method(self, *args, **kwargs):
        _warn_once(option, _NO_EFFECT[option] + "; this option is ignored")
    method.__name__ = option
    method.__doc__ = f"Accepted for compatibility; warns once: {_NO_EFFECT[option]}."
    return method


class Config:
    """What a :class:`Predictor` runs and how: the model files and the device.

    ``Config()``, ``Config(model_dir)`` (a folder holding ``__model__`` or one ``*.pdmodel`` with
    its ``*.pdiparams``) or ``Config(prog_file, params_file)``.

    Example:
        >>> config = paddle.inference.Config('inference/model.pdmodel',
        ...                                   'inference/model.pdiparams')
        >>> predictor = paddle.inference.create_predictor(config)
    """

    Precision = PrecisionType
    Float32, Int8, Half, Bfloat16 = (PrecisionType.Float32, PrecisionType.Int8,
                                     PrecisionType.Half, PrecisionType.Bfloat16)

    def __init__(self, *args):
        self._model_dir = ""
        self._prog_file = ""
        self._params_file = ""
        self._buffers = None
        self._use_gpu = False
        self._gpu_id = 0
        self._pool_mb = 0
        self._threads = 1
        self._ir_optim = True
        self._feed_fetch = True
        self._glog_disabled = False
        self._specify_input_names = False
        if len(args) == 1 and isinstance(args[0], Config):
            self.__dict__.update(args[0].__dict__)
        elif len(args) == 1:
            self.set_model(args[0])
        elif len(args) == 2:
            self.set_model(args[0], args[1])
        elif args:
            raise TypeError(f"Config: expected (), (model_dir), (prog_file, params_file) or "
                            f"(Config), got {len(args)} arguments")

    # ---------------------------------------------------------------- model files
    def set_model(self, model, params=None) -> None:
        """A model folder, or the program and parameters files."""
        if params is None:
            self._model_dir, self._prog_file, self._params_file = str(model), "", ""
        else:
            self._model_dir, self._prog_file, self._params_file = "", str(model), str(params)
        self._buffers = None

    def set_prog_file(self, x: str) -> None:
        self._prog_file = str(x)

    def set_params_file(self, x: str) -> None:
        self._params_file = str(x)

    def set_model_buffer(self, prog_buffer, prog_buffer_size: int, params_buffer,
                         params_buffer_size: int) -> None:
        """The program and parameters from memory (bytes or str of the files' contents)."""
        def as_bytes(b, n):
            b = b.encode("latin-1") if isinstance(b, str) else bytes(b)
            return b[:n]
        self._buffers = (as_bytes(prog_buffer, prog_buffer_size),
                         as_bytes(params_buffer, params_buffer_size))

    def model_from_memory(self) -> bool:
        return self._buffers is not None

    def model_dir(self) -> str:
        return self._model_dir

    def prog_file(self) -> str:
        return self._prog_file

    def params_file(self) -> str:
        return self._params_file

    def _files(self):
        """(program file, parameters file) this config names."""
        if self._prog_file:
            return self._prog_file, self._params_file
        d = self._model_dir
        if not d:
            raise ValueError("create_predictor: the Config names no model (use "
                             "Config(prog_file, params_file), Config(model_dir) or set_model)")
        if not os.path.isdir(d):
            raise FileNotFoundError(f"create_predictor: model_dir {d} is not a folder")
        if os.path.exists(os.path.join(d, "__model__")):
            params = [f for f in ("__params__", "params") if os.path.exists(os.path.join(d, f))]
            if not params:
                raise ValueError(f"create_predictor: {d} holds __model__ but no combined "
                                 "parameters file (__params__); a folder of one file per "
                                 "parameter is not supported")
            return os.path.join(d, "__model__"), os.path.join(d, params[0])
        models = sorted(f for f in os.listdir(d) if f.endswith(".pdmodel"))
        if len(models) != 1:
            raise ValueError(f"create_predictor: model_dir {d} must hold __model__ or exactly "
                             f"one *.pdmodel, found {models}")
        prog = os.path.join(d, models[0])
        return prog, prog[: -len(".pdmodel")] + ".pdiparams"

    # ---------------------------------------------------------------- device
    def enable_use_gpu(self, memory_pool_init_size_mb: int, device_id: int = 0,
                       precision_mode: PrecisionType = PrecisionType.Float32) -> None:
        """Run on GPU ``device_id`` (CuPy); without a usable GPU, warns and stays on the CPU."""
        from .. import backend

        if PrecisionType(precision_mode) != PrecisionType.Float32:
            _warn_once("enable_use_gpu", f"precision_mode {PrecisionType(precision_mode).name}"
                       " is not applied: the program runs in its saved precision")
        if not backend.gpu_available():
            _warn_once("enable_use_gpu", "no usable GPU (CuPy with a CUDA device): "
                       f"{backend.gpu_error()}; the predictor runs on the CPU")
            return
        self._use_gpu, self._gpu_id = True, int(device_id)
        self._pool_mb = int(memory_pool_init_size_mb)

    def disable_gpu(self) -> None:
        self._use_gpu = False

    def use_gpu(self) -> bool:
        return self._use_gpu

    def gpu_device_id(self) -> int:
        return self._gpu_id

    def memory_pool_init_size_mb(self) -> int:
        return self._pool_mb

    def fraction_of_gpu_memory_for_pool(self) -> float:
        return 0.0

    def use_xpu(self) -> bool:
        return False

    def xpu_device_id(self) -> int:
        return 0

    # ---------------------------------------------------------------- CPU and passes
    def set_cpu_math_library_num_threads(self, cpu_math_library_num_threads: int) -> None:
        """Threads of the BLAS library while the predictor runs (through threadpoolctl when it
        is installed; otherwise the BLAS library's environment settings decide, and this warns
        once)."""
        self._threads = int(cpu_math_library_num_threads)
        try:
            import threadpoolctl  # noqa: F401
        except ImportError:
            _warn_once("set_cpu_math_library_num_threads", "threadpoolctl is not installed, so "
                       "the BLAS thread count is left to OMP_NUM_THREADS/OPENBLAS_NUM_THREADS")

    def cpu_math_library_num_threads(self) -> int:
        return self._threads

    def switch_ir_optim(self, x: bool = True) -> None:
        """IR graph optimisation: paddle_hl runs the program's operators as saved; asking for
        it warns once."""
        self._ir_optim = bool(x)
        if x:
            _warn_once("switch_ir_optim", "paddle_hl runs no IR graph passes; the program's "
                       "operators run as saved, except that each convolution followed by a "
                       "batch norm always runs as one folded convolution (same results)")

    def ir_optim(self) -> bool:
        return False

    def switch_ir_debug(self, x: bool = True) -> None:
        if x:
            _warn_once("switch_ir_debug", "paddle_hl runs no IR graph passes to debug")

    def switch_use_feed_fetch_ops(self, x: bool = True) -> None:
        """Inputs and outputs go through handles either way; kept for compatibility."""
        self._feed_fetch = bool(x)

    def use_feed_fetch_ops_enabled(self) -> bool:
        return self._feed_fetch

    def switch_specify_input_names(self, x: bool = True) -> None:
        self._specify_input_names = bool(x)

    def specify_input_name(self) -> bool:
        return self._specify_input_names

    def disable_glog_info(self) -> None:
        """paddle_hl writes no glog lines; kept for compatibility."""
        self._glog_disabled = True

    def glog_info_disabled(self) -> bool:
        return self._glog_disabled

    def disable_mkldnn(self) -> None:
        pass

    def mkldnn_enabled(self) -> bool:
        return False

    def mkldnn_int8_enabled(self) -> bool:
        return False

    def tensorrt_engine_enabled(self) -> bool:
        return False

    def tensorrt_dynamic_shape_enabled(self) -> bool:
        return False

    def lite_engine_enabled(self) -> bool:
        return False

    def onnxruntime_enabled(self) -> bool:
        return False

    def disable_onnxruntime(self) -> None:
        pass

    def enable_new_executor(self, x: bool = True) -> None:
        pass

    def summary(self) -> str:
        """A text table of the settings."""
        try:
            prog, params = self._files()
        except (ValueError, FileNotFoundError):
            prog, params = self._prog_file, self._params_file
        rows = [("model_dir", self._model_dir), ("model_file", prog), ("params_file", params),
                ("use_gpu", self._use_gpu), ("gpu_device_id", self._gpu_id),
                ("cpu_math_thread", self._threads), ("ir_optim", False),
                ("use_feed_fetch_ops", self._feed_fetch), ("tensorrt", False),
                ("mkldnn", False)]
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}} | {v}" for k, v in rows)


for _opt in _NO_EFFECT:
    setattr(Config, _opt, _no_effect(_opt))


class InferTensor:
    """An input or output handle of a :class:`Predictor` (Paddle's ``inference.Tensor``)."""

    def __init__(self, predictor, name, is_input):
        self._pred, self._name, self._is_input = predictor, name, is_input
        self._shape = None

    @property
    def name(self) -> str:
        return self._name

    def _value(self):
        v = self._pred._values.get(self._name)
        if v is None:
            what = "copy_from_cpu" if self._is_input else "run()"
            raise RuntimeError(f"inference.Tensor '{self._name}' holds no data yet (call "
                               f"{what} first)")
        return v

    def reshape(self, shape) -> None:
        """Declare the shape the next ``copy_from_cpu`` fills."""
        if not self._is_input:
            raise RuntimeError(f"inference.Tensor '{self._name}' is an output; reshape applies "
                               "to inputs")
        self._shape = [int(shape)] if isinstance(shape, (int, np.integer)) else [
            int(d) for d in shape]

    def copy_from_cpu(self, data) -> None:
        """Set the input from a NumPy array (its shape must agree with ``reshape`` when that
        was called)."""
        if not self._is_input:
            raise RuntimeError(f"inference.Tensor '{self._name}': copy_from_cpu applies to "
                               "inputs")
        arr = np.asarray(data)
        if self._shape is not None and list(arr.shape) != self._shape:
            if int(np.prod(self._shape)) != arr.size:
                raise ValueError(f"inference.Tensor '{self._name}'.copy_from_cpu: data of "
                                 f"shape {list(arr.shape)} does not fill the shape "
                                 f"{self._shape} set by reshape")
            arr = arr.reshape(self._shape)
        self._pred._set_input(self._name, arr)
        self._shape = list(arr.shape)

    def share_external_data(self, data) -> None:
        """Set the input from a paddle_hl Tensor (no copy)."""
        if not isinstance(data, Tensor):
            raise TypeError(f"inference.Tensor '{self._name}'.share_external_data: expected a "
                            f"Tensor, got {type(data).__name__}")
        self._pred._values[self._name] = data
        self._shape = list(data.shape)

    def copy_to_cpu(self) -> np.ndarray:
        """The value as a NumPy array (a copy)."""
        return np.array(self._value().numpy())

    def shape(self) -> list:
        if self._name in self._pred._values:
            return list(self._pred._values[self._name].shape)
        if self._shape is not None:
            return list(self._shape)
        return list(self._pred._declared_shape(self._name))

    def type(self) -> DataType:
        name = (self._pred._values[self._name].dtype.name if self._name in self._pred._values
                else self._pred._declared_dtype(self._name))
        return _DTYPE_OF[name]

    def lod(self) -> list:
        return []

    def set_lod(self, x) -> None:
        if x:
            raise ValueError(f"inference.Tensor '{self._name}'.set_lod: LoD (ragged) inputs "
                             "are not supported by paddle_hl")

    def __repr__(self):
        return f"inference.Tensor(name={self._name!r}, {'input' if self._is_input else 'output'})"


class Predictor:
    """Runs an inference program: inputs through handles (or a list to :meth:`run`), then
    outputs through handles.

    Example:
        >>> predictor = paddle.inference.create_predictor(config)
        >>> h = predictor.get_input_handle(predictor.get_input_names()[0])
        >>> h.reshape(x.shape); h.copy_from_cpu(x)
        >>> predictor.run()
        >>> y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
    """

    def __init__(self, config: Config, _model=None):
        self._config = Config(config)
        self._place = f"gpu:{config.gpu_device_id()}" if config.use_gpu() else "cpu"
        if _model is not None:
            self._model = _model
        elif config.model_from_memory():
            self._model = _load_from_memory(*config._buffers)
        else:
            self._model = _Model(*config._files())
        if config.use_gpu():
            self._model.layer.to(self._place)
        self._values: dict = {}
        self._inputs = [n for n, _, _ in self._model.feeds]
        self._outputs = list(self._model.fetches)

    def _declared_shape(self, name):
        return self._model.declared.get(name, ([], None))[0]

    def _declared_dtype(self, name):
        return self._model.declared.get(name, ([], None))[1] or "float32"

    def _set_input(self, name, arr):
        from ..tensor.creation import to_tensor

        self._values[name] = to_tensor(arr, place=self._place)

    def get_input_names(self) -> list:
        return list(self._inputs)

    def get_output_names(self) -> list:
        return list(self._outputs)

    def get_input_handle(self, name: str) -> InferTensor:
        if name not in self._inputs:
            raise ValueError(f"Predictor.get_input_handle: no input named {name!r}; the inputs "
                             f"are {self._inputs}")
        return InferTensor(self, name, True)

    def get_output_handle(self, name: str) -> InferTensor:
        if name not in self._outputs:
            raise ValueError(f"Predictor.get_output_handle: no output named {name!r}; the "
                             f"outputs are {self._outputs}")
        return InferTensor(self, name, False)

    def run(self, inputs=None):
        """Run the program. With ``inputs`` (a list of Tensors in input order) returns the list
        of output Tensors; without, reads the input handles and fills the output handles."""
        from ..framework.state import no_grad

        if inputs is not None:
            xs = [x if isinstance(x, Tensor) else self._to_tensor(x) for x in inputs]
        else:
            missing = [n for n in self._inputs if n not in self._values]
            if missing:
                raise RuntimeError(f"Predictor.run: inputs {missing} have no data (use "
                                   "get_input_handle(name).copy_from_cpu(array))")
            xs = [self._values[n] for n in self._inputs]
        with no_grad(), _threads(self._config.cpu_math_library_num_threads()):
            outs = self._model.layer(*xs)
        outs = outs if isinstance(outs, list) else [outs]
        if inputs is not None:
            return outs
        for n, v in zip(self._outputs, outs):
            self._values[n] = v
        return True

    def _to_tensor(self, x):
        from ..tensor.creation import to_tensor

        return to_tensor(np.asarray(x), place=self._place)

    def clone(self, stream=None) -> Predictor:
        """A predictor sharing this one's program and parameters, with its own handles."""
        return Predictor(self._config, _model=self._model)

    def clear_intermediate_tensor(self) -> None:
        self._values = {k: v for k, v in self._values.items() if k in self._inputs}

    def try_shrink_memory(self) -> int:
        self.clear_intermediate_tensor()
        return 0


class _threads:
    """BLAS threads for the span of a run, when threadpoolctl is installed."""

    def __init__(self, n):
        self.n, self.ctl = n, None

    def __enter__(self):
        if self.n and self.n > 0:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                return self
            self.ctl = threadpool_limits(limits=self.n, user_api="blas")
        return self

    def __exit__(self, *exc):
        if self.ctl is not None:
            self.ctl.unregister()


class _Model:
    """The program a predictor runs, with its input and output names: a Paddle ProgramDesc
    (run by the program interpreter) or a program in paddle_hl's own ``jit.save`` format."""

    def __init__(self, prog_file, params_file):
        from ..jit._interpreter import is_program_desc, load_program

        if not os.path.isfile(prog_file):
            raise FileNotFoundError(f"create_predictor: the program file {prog_file} does not "
                                    "exist")
        if is_program_desc(prog_file):
            self.layer = load_program(prog_file, params_file)
            prog = self.layer.program()
            self.feeds = prog.feeds
            self.fetches = list(prog.fetches)
            self.declared = dict(prog.var_info)
            return
        from ..jit import load

        # paddle_hl's own format: its input names are the InputSpec names it was saved with
        self.layer = load(os.path.dirname(prog_file) or ".",
                          model_filename=os.path.basename(prog_file),
                          params_filename=os.path.basename(params_file))
        specs = self.layer._specs
        self.feeds = [(s.name or f"x{i}", list(s.shape), s.dtype.name)
                      for i, s in enumerate(specs)]
        self.fetches = [f"output_{i}" for i in range(len(self.layer.program()["outs"]))]
        self.declared = {n: (shape, dt) for n, shape, dt in self.feeds}


def _load_from_memory(prog: bytes, params: bytes):
    """A program and parameters given as bytes: written to a private temporary folder so the
    file readers (and their error messages) serve both ways."""
    with tempfile.TemporaryDirectory(prefix="paddle_hl_inference_") as d:
        prog_file = os.path.join(d, "model.pdmodel")
        params_file = os.path.join(d, "model.pdiparams")
        with open(prog_file, "wb") as f:
            f.write(prog)
        with open(params_file, "wb") as f:
            f.write(params)
        return _Model(prog_file, params_file)


def create_predictor(config: Config) -> Predictor:
    """A :class:`Predictor` for ``config``.

    Example:
        >>> predictor = paddle.inference.create_predictor(paddle.inference.Config(
        ...     'inference/model.pdmodel', 'inference/model.pdiparams'))
    """
    if not isinstance(config, Config):
        raise TypeError(f"create_predictor: expected a paddle.inference.Config, got "
                        f"{type(config).__name__}")
    return Predictor(config)


class PredictorPool:
    """``size`` predictors sharing one program and its parameters."""

    def __init__(self, config: Config, size: int = 1):
        first = create_predictor(config)
        self._preds = [first] + [first.clone() for _ in range(int(size) - 1)]

    def retrive(self, idx: int) -> Predictor:  # Paddle's spelling
        return self._preds[idx]
