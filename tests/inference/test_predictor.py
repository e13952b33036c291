"""paddle.inference (Config, create_predictor, Predictor, handles) on inference models written
by real Paddle 2.6.2 in the test, against real Paddle Inference's outputs and API."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import inference
from tests import pdmodel_zoo as zoo

pytestmark = pytest.mark.parity


def _predict(config_or_pred, inputs):
    """Run through the handles: reshape, copy_from_cpu, run, copy_to_cpu."""
    pred = config_or_pred
    for name, x in zip(pred.get_input_names(), inputs):
        h = pred.get_input_handle(name)
        h.reshape(list(x.shape))
        h.copy_from_cpu(x)
    pred.run()
    return [pred.get_output_handle(n).copy_to_cpu() for n in pred.get_output_names()]


@pytest.mark.parametrize("build", [zoo.zoo_model("mobilenet_v3_small"), zoo.lstm_program,
                                   zoo.transformer_program], ids=["mobilenet_v3", "lstm",
                                                                  "transformer"])
def test_predictor_matches_paddle_inference(pd, tmp_path, build):
    inputs, _ = zoo.save_real(pd, build, tmp_path / "model")
    files = (str(tmp_path / "model.pdmodel"), str(tmp_path / "model.pdiparams"))
    ref_cfg = pd.inference.Config(*files)
    ref_cfg.disable_glog_info()
    ref = pd.inference.create_predictor(ref_cfg)
    want = _predict(ref, inputs)
    config = inference.Config(*files)
    config.disable_gpu()
    config.switch_use_feed_fetch_ops(False)
    pred = inference.create_predictor(config)
    assert pred.get_input_names() == ref.get_input_names()
    assert pred.get_output_names() == ref.get_output_names()
    got = _predict(pred, inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        zoo.assert_close(g, w, f"output {i}")
    # handle metadata as Paddle reports it
    h = pred.get_output_handle(pred.get_output_names()[0])
    rh = ref.get_output_handle(ref.get_output_names()[0])
    assert h.shape() == rh.shape()
    assert h.type().name == rh.type().name and int(h.type()) == int(rh.type())
    # run(list of Tensors) returns the outputs as Tensors
    outs = pred.run([paddle.to_tensor(x) for x in inputs])
    zoo.assert_close(outs[0].numpy(), want[0])
    # a clone shares the program and parameters but has its own handles
    twin = pred.clone()
    assert twin.get_input_names() == pred.get_input_names()
    zoo.assert_close(_predict(twin, inputs)[0], want[0])


def test_model_dir_and_memory_configs(pd, tmp_path):
    inputs, want = zoo.save_real(pd, zoo.zoo_model("LeNet"), tmp_path / "inference")
    pred = inference.create_predictor(inference.Config(str(tmp_path)))
    zoo.assert_close(_predict(pred, inputs)[0], want[0])
    cfg = inference.Config()
    prog = (tmp_path / "inference.pdmodel").read_bytes()
    params = (tmp_path / "inference.pdiparams").read_bytes()
    cfg.set_model_buffer(prog, len(prog), params, len(params))
    assert cfg.model_from_memory()
    zoo.assert_close(_predict(inference.create_predictor(cfg), inputs)[0], want[0])
    cfg2 = inference.Config()
    cfg2.set_prog_file(str(tmp_path / "inference.pdmodel"))
    cfg2.set_params_file(str(tmp_path / "inference.pdiparams"))
    assert cfg2.prog_file().endswith("inference.pdmodel")
    zoo.assert_close(_predict(inference.create_predictor(cfg2), inputs)[0], want[0])
    (tmp_path / "other.pdmodel").write_bytes(prog)
    with pytest.raises(ValueError, match=r"exactly one \*\.pdmodel"):
        inference.create_predictor(inference.Config(str(tmp_path)))


def test_options_without_meaning_warn_once_naming_the_option(pd):
    cfg = inference.Config()
    for opt, args in [("enable_tensorrt_engine", (1 << 30, 1, 3, inference.PrecisionType.Half,
                                                  False, False)),
                      ("enable_mkldnn", ()), ("enable_xpu", ()), ("enable_memory_optim", ())]:
        inference._predictor._WARNED.discard(opt)
        with pytest.warns(UserWarning, match=rf"Config\.{opt}: .*ignored"):
            getattr(cfg, opt)(*args)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            getattr(cfg, opt)(*args)  # said once only
    assert not cfg.tensorrt_engine_enabled() and not cfg.mkldnn_enabled()
    assert not cfg.use_xpu() and not cfg.ir_optim()
    cfg.set_cpu_math_library_num_threads(2)
    assert cfg.cpu_math_library_num_threads() == 2
    # the same names as real Paddle Inference
    real = pd.inference
    for name in ["Config", "DataType", "PlaceType", "PrecisionType", "Predictor",
                 "PredictorPool", "Tensor", "create_predictor", "get_version",
                 "get_num_bytes_of_data_type", "get_trt_compile_version",
                 "get_trt_runtime_version"]:
        assert hasattr(real, name) and hasattr(inference, name), name
    for enum_name in ("PrecisionType", "PlaceType", "DataType"):
        ours, theirs = getattr(inference, enum_name), getattr(real, enum_name)
        assert {m.name: int(m) for m in ours} == {k: int(v) for k, v in
                                                   theirs.__members__.items()}
    for name in ["set_model", "enable_use_gpu", "disable_gpu", "use_gpu", "switch_ir_optim",
                 "enable_memory_optim", "enable_mkldnn", "enable_tensorrt_engine",
                 "switch_use_feed_fetch_ops", "disable_glog_info",
                 "set_cpu_math_library_num_threads", "set_model_buffer", "summary",
                 "set_trt_dynamic_shape_info", "enable_xpu", "delete_pass"]:
        assert hasattr(real.Config, name) and callable(getattr(inference.Config, name)), name
    for name in ["get_input_names", "get_input_handle", "run", "get_output_names",
                 "get_output_handle", "clone", "clear_intermediate_tensor",
                 "try_shrink_memory"]:
        assert hasattr(real.Predictor, name) and hasattr(inference.Predictor, name), name
    for name in ["reshape", "copy_from_cpu", "copy_to_cpu", "shape", "type", "lod",
                 "share_external_data"]:
        assert hasattr(real.Tensor, name) and hasattr(inference.Tensor, name), name
    assert inference.get_num_bytes_of_data_type(inference.DataType.FLOAT16) == 2


def test_gpu_option_without_gpu_warns_and_runs_on_cpu(pd, tmp_path):
    from paddle_hl import backend

    if backend.gpu_available():
        pytest.skip("a GPU is usable here: enable_use_gpu takes effect")
    inference._predictor._WARNED.discard("enable_use_gpu")
    cfg = inference.Config()
    with pytest.warns(UserWarning, match=r"Config\.enable_use_gpu: no usable GPU"):
        cfg.enable_use_gpu(100, 0)
    assert not cfg.use_gpu()


def test_handle_errors(pd, tmp_path):
    inputs, _ = zoo.save_real(pd, zoo.zoo_model("LeNet"), tmp_path / "m")
    pred = inference.create_predictor(inference.Config(str(tmp_path / "m.pdmodel"),
                                                       str(tmp_path / "m.pdiparams")))
    with pytest.raises(ValueError, match=r"no input named 'y'; the inputs are \['x'\]"):
        pred.get_input_handle("y")
    with pytest.raises(RuntimeError, match=r"inputs \['x'\] have no data"):
        pred.run()
    h = pred.get_input_handle("x")
    h.reshape([2, 1, 28, 28])
    with pytest.raises(ValueError, match=r"does not fill the shape \[2, 1, 28, 28\]"):
        h.copy_from_cpu(np.zeros([3, 1, 28, 28], np.float32))
    out = pred.get_output_handle(pred.get_output_names()[0])
    with pytest.raises(RuntimeError, match="holds no data yet"):
        out.copy_to_cpu()
    with pytest.raises(TypeError, match="expected a paddle.inference.Config"):
        inference.create_predictor("m.pdmodel")


def test_predictor_runs_paddle_hl_exports(tmp_path):
    """A model saved by paddle_hl's own jit.save runs through the same predictor."""
    paddle.seed(0)
    net = paddle.vision.models.mobilenet_v3_small(scale=0.5, num_classes=7)
    net.eval()
    paddle.jit.save(net, str(tmp_path / "hl"),
                    [paddle.static.InputSpec([None, 3, 32, 32], "float32", "image")])
    x = np.random.default_rng(0).standard_normal([2, 3, 32, 32]).astype(np.float32)
    with paddle.no_grad():
        want = net(paddle.to_tensor(x)).numpy()
    pred = inference.create_predictor(inference.Config(str(tmp_path / "hl.pdmodel"),
                                                       str(tmp_path / "hl.pdiparams")))
    assert pred.get_input_names() == ["image"]
    # jit.save writes Paddle's ProgramDesc: the output is the fetched program variable
    names = pred.get_output_names()
    assert len(names) == 1 and names == paddle.jit.load(str(tmp_path / "hl")).output_names
    assert pred.get_input_handle("image").shape() == [-1, 3, 32, 32]
    np.testing.assert_allclose(_predict(pred, [x])[0], want, rtol=1e-5, atol=1e-6)
