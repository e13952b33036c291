"""paddle_hl.inference: run Paddle inference models (``.pdmodel`` + ``.pdiparams``) the way
Paddle Inference's Python API does.

:class:`Config` names the model (a folder, or the program and parameters files) and the device;
:func:`create_predictor` reads the program (no code from the file runs) and returns a
:class:`Predictor`; inputs go in through handles (``get_input_handle(name)``, ``reshape``,
``copy_from_cpu``) and outputs come out through handles (``copy_to_cpu``). The program runs on
paddle_hl's kernels (NumPy on the CPU, CuPy on a GPU after ``Config.enable_use_gpu`` when a GPU
is usable). Options for engines paddle_hl does not have (TensorRT, oneDNN/MKLDNN, XPU, IPU,
Lite, ONNX Runtime, IR passes) are accepted and each warns once, naming the option; their
query methods answer False.

Example:
    >>> config = paddle.inference.Config('model.pdmodel', 'model.pdiparams')
    >>> predictor = paddle.inference.create_predictor(config)
    >>> name = predictor.get_input_names()[0]
    >>> handle = predictor.get_input_handle(name)
    >>> handle.reshape([1, 3, 224, 224])
    >>> handle.copy_from_cpu(image)
    >>> predictor.run()
    >>> out = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
"""

from __future__ import annotations

from ._predictor import (
    Config,
    DataType,
    PlaceType,
    PrecisionType,
    Predictor,
    PredictorPool,
    create_predictor,
    get_num_bytes_of_data_type,
    get_trt_compile_version,
    get_trt_runtime_version,
    get_version,
)
from ._predictor import InferTensor as Tensor

__all__ = ["Config", "DataType", "PlaceType", "PrecisionType", "Predictor", "PredictorPool",
           "Tensor", "create_predictor", "get_num_bytes_of_data_type", "get_trt_compile_version",
           "get_trt_runtime_version", "get_version"]
