"""paddle_hl runs inference programs written by real Paddle 2.6.2 (``.pdmodel`` ProgramDesc +
``.pdiparams``): the vision zoo, RNN, Transformer encoder and conv/interpolation programs, each
saved by real ``paddle.jit.save`` in the test and run by ``paddle_hl.jit.load``; plus the
protobuf codec against real files, and the errors for unknown ops and damaged files."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.jit import _interpreter, _proto
from tests import pdmodel_zoo as zoo

pytestmark = pytest.mark.parity

# one model per family of paddle.vision.models runs by default; the larger members are slow
FAST_ZOO = ["LeNet", "resnet18", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3_small",
            "mobilenet_v3_large", "squeezenet1_0", "squeezenet1_1", "shufflenet_v2_x0_25",
            "shufflenet_v2_swish", "densenet121"]
SLOW_ZOO = ["alexnet", "vgg11", "vgg13", "vgg16", "vgg19", "resnet34", "resnet50", "resnet101",
            "resnet152", "resnext50_32x4d", "resnext50_64x4d", "resnext101_32x4d",
            "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d", "wide_resnet50_2",
            "wide_resnet101_2", "densenet161", "densenet169", "densenet201", "densenet264",
            "shufflenet_v2_x0_33", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
            "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "inception_v3"]


def _run_hl(prefix, inputs):
    layer = paddle.jit.load(str(prefix))
    with paddle.no_grad():
        out = layer(*[paddle.to_tensor(a) for a in inputs])
    return [o.numpy() for o in (out if isinstance(out, list) else [out])]


def _check(pd, build, prefix):
    inputs, want = zoo.save_real(pd, build, prefix)
    got = _run_hl(prefix, inputs)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        zoo.assert_close(g, w, f"output {i}")
    return inputs, want


@pytest.mark.parametrize("name", FAST_ZOO + [pytest.param(n, marks=pytest.mark.slow)
                                             for n in SLOW_ZOO])
def test_vision_zoo(pd, tmp_path, name):
    # AlexNet has no adaptive pooling before its classifier: it takes 224x224 only
    size = {"inception_v3": 96, "alexnet": 224}.get(name, 64)
    _check(pd, zoo.zoo_model(name, size=size), tmp_path / name)


def test_googlenet_three_outputs(pd, tmp_path):
    # GoogLeNet's auxiliary heads fix the input size (192 gives their 3x3 maps)
    inputs, want = _check(pd, zoo.zoo_model("googlenet", size=192), tmp_path / "g")
    assert len(want) == 3


@pytest.mark.parametrize("build", [zoo.lstm_program, zoo.gru_program, zoo.transformer_program,
                                   zoo.conv_interp_program, zoo.tensor_ops_program,
                                   zoo.more_ops_program, zoo.activations_program],
                         ids=["lstm", "gru_simple_rnn", "transformer", "conv_interp",
                              "tensor_ops", "more_ops", "activations"])
def test_sequence_and_conv_programs(pd, tmp_path, build):
    _check(pd, build, tmp_path / "m")


def test_free_height_and_width(pd, tmp_path):
    """Shapes read at run time (shape, slice, SizeTensor, ShapeTensor, range, meshgrid) follow
    each input's size, as in Paddle's program."""
    _check(pd, zoo.dynamic_heads_program, tmp_path / "m")
    layer, ref = paddle.jit.load(str(tmp_path / "m")), pd.jit.load(str(tmp_path / "m"))
    x = np.random.default_rng(5).standard_normal([1, 3, 40, 24]).astype(np.float32)
    got, want = layer(paddle.to_tensor(x)), ref(pd.to_tensor(x))
    assert got[0].shape == [1, 2, 40, 24]
    for i, (g, w) in enumerate(zip(got, want)):
        zoo.assert_close(g.numpy(), w.numpy(), f"output {i}")


def test_free_batch_dim_and_layer(pd, tmp_path):
    zoo.save_real(pd, zoo.zoo_model("mobilenet_v3_small"), tmp_path / "m")
    layer = paddle.jit.load(str(tmp_path / "m"))
    assert isinstance(layer, paddle.nn.Layer) and not layer.training
    ref = pd.jit.load(str(tmp_path / "m"))
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal([batch, 3, 64, 64]).astype("float32")
        zoo.assert_close(layer(paddle.to_tensor(x)).numpy(), ref(pd.to_tensor(x)).numpy())
    # parameters as Paddle's loaded layer names them: param_i over the sorted variable names
    assert list(layer.state_dict()) == list(ref.state_dict())
    # ... each keeping its variable name (Paddle renames them when they clash in its process)
    prog = _proto.decode((tmp_path / "m.pdmodel").read_bytes())
    persistable = sorted(v["name"] for v in prog["blocks"][0]["vars"] if v.get("persistable")
                         and v["name"] not in ("feed", "fetch"))
    assert [p.name for p in layer.parameters()] == persistable
    with pytest.raises(ValueError, match=r"input 'x' has shape \[1, 3, 32, 64\].*\[-1, 3, 64, "
                                         r"64\]"):
        layer(paddle.zeros([1, 3, 32, 64]))
    with pytest.raises(TypeError, match="dtype float64"):
        layer(paddle.zeros([1, 3, 64, 64], "float64"))


def test_codec_matches_protobuf_and_reencodes_byte_for_byte(pd, tmp_path):
    from google.protobuf import json_format
    from paddle.base.proto import framework_pb2

    zoo.save_real(pd, zoo.lstm_program, tmp_path / "m")
    buf = (tmp_path / "m.pdmodel").read_bytes()
    desc = _proto.decode(buf, "ProgramDesc", "m.pdmodel")
    assert _proto.encode(desc) == buf
    ref = framework_pb2.ProgramDesc()
    ref.ParseFromString(buf)
    want = json_format.MessageToDict(ref, preserving_proto_field_name=True,
                                     use_integers_for_enums=True)
    # the same ops, in order, with the same attribute values (LONG, LONGS, FLOAT, STRING...)
    got_ops = desc["blocks"][0]["ops"]
    want_ops = want["blocks"][0]["ops"]
    assert [o["type"] for o in got_ops] == [o["type"] for o in want_ops]
    for g, w in zip(got_ops, want_ops):
        for ga, wa in zip(g["attrs"], w["attrs"]):
            assert ga["name"] == wa["name"]
            v = _proto.attr_value(ga)
            key = _proto.ATTR_FIELDS[ga.get("type", 0)]
            wv = wa.get(key, [] if isinstance(v, list) else type(v)())
            if isinstance(v, float):
                assert v == pytest.approx(wv, rel=1e-7)
            elif isinstance(v, list) and v and isinstance(v[0], int) and not isinstance(
                    v[0], bool):
                assert v == [int(a) for a in wv]
            else:
                assert v == (int(wv) if isinstance(v, int) and not isinstance(v, bool)
                             else wv)
    assert desc["version"]["version"] == int(want["version"]["version"])


def test_codec_every_attr_type_round_trips():
    attrs = [{"name": "i", "type": 0, "i": -3}, {"name": "f", "type": 1, "f": 0.5},
             {"name": "s", "type": 2, "s": "héllo"}, {"name": "ints", "type": 3, "ints": [1, -2]},
             {"name": "fs", "type": 4, "floats": [0.25, -1.0]},
             {"name": "ss", "type": 5, "strings": ["a", ""]}, {"name": "b", "type": 6, "b": True},
             {"name": "bs", "type": 7, "bools": [True, False]},
             {"name": "blk", "type": 8, "block_idx": 1}, {"name": "l", "type": 9, "l": -2 ** 40},
             {"name": "blks", "type": 10, "blocks_idx": [1, 2]},
             {"name": "ls", "type": 11, "longs": [2 ** 40, -1]},
             {"name": "ds", "type": 12, "float64s": [0.1, 1e300]},
             {"name": "v", "type": 13, "var_name": "x"},
             {"name": "vs", "type": 14, "vars_name": ["x", "y"]},
             {"name": "d", "type": 15, "float64": 0.1},
             {"name": "sc", "type": 16, "scalar": {"type": 2, "i": -7}},
             {"name": "scs", "type": 17, "scalars": [
                 {"type": 1, "b": True}, {"type": 3, "r": 2.5},
                 {"type": 4, "c": {"r": 1.0, "i": -1.0}}]}]
    op = {"type": "custom", "inputs": [{"parameter": "X", "arguments": ["x"]}], "attrs": attrs}
    buf = _proto.encode({"blocks": [{"idx": 0, "parent_idx": -1, "ops": [op]}]})
    back = _proto.decode(buf)
    assert back["blocks"][0]["ops"][0] == op
    assert _proto.field(back["blocks"][0], "BlockDesc", "forward_block_idx") == -1
    vals = [_proto.attr_value(a) for a in back["blocks"][0]["ops"][0]["attrs"]]
    assert vals[0] == -3 and vals[9] == -2 ** 40 and vals[11] == [2 ** 40, -1]
    assert vals[16] == -7 and vals[17] == [True, 2.5, complex(1, -1)]
    # packed repeated ints (another writer's choice) decode the same
    packed = _proto.encode({"name": "p", "type": 3}, "OpAttr") + b"\x32\x02\x01\x02"
    assert _proto.decode(packed, "OpAttr")["ints"] == [1, 2]


def test_unknown_op_is_named_before_anything_runs(pd, tmp_path, monkeypatch):
    zoo.save_real(pd, zoo.zoo_model("LeNet"), tmp_path / "m")
    path = tmp_path / "m.pdmodel"
    desc = _proto.decode(path.read_bytes())
    ops = desc["blocks"][0]["ops"]
    ops[3]["type"] = "my_custom_op"
    ops[5]["type"] = "yolo_box"
    path.write_bytes(_proto.encode(desc))
    ran = []
    monkeypatch.setitem(_interpreter.OPS, "relu", lambda *a: ran.append(a))
    with pytest.raises(ValueError, match=r"m\.pdmodel uses operator type\(s\) my_custom_op, "
                                         "yolo_box that paddle_hl cannot run"):
        paddle.jit.load(str(tmp_path / "m"))
    assert not ran


def test_truncated_and_corrupt_files_are_named(pd, tmp_path):
    zoo.save_real(pd, zoo.zoo_model("LeNet"), tmp_path / "m")
    path = tmp_path / "m.pdmodel"
    buf = path.read_bytes()
    for n in (len(buf) - 1, len(buf) // 2):
        path.write_bytes(buf[:n])
        with pytest.raises(ValueError, match=rf"m\.pdmodel is truncated at byte {n}: "
                                             r"[\w.]+ declares \d+ bytes from byte \d+, so the "
                                             r"file should hold at least \d+ bytes"):
            paddle.jit.load(str(tmp_path / "m"))
    path.write_bytes(buf[:3])  # inside the first block's length
    with pytest.raises(ValueError, match=r"truncated at byte 3: a number of ProgramDesc\.blocks "
                                         "runs past its end"):
        paddle.jit.load(str(tmp_path / "m"))
    # a length-delimited field whose size runs past its enclosing message
    bad = bytearray(buf)
    op_at = buf.index(b"\x22", 4)  # the first BlockDesc.ops entry... or any field 4 of a block
    bad[op_at + 1] = 0x7F
    path.write_bytes(bytes(bad))
    with pytest.raises(ValueError, match=r"m\.pdmodel is (corrupt at byte \d+ of \d+|truncated)"):
        paddle.jit.load(str(tmp_path / "m"))
    # a known field with the wrong wire type
    with pytest.raises(_proto.ProtoError, match=r"corrupt at byte 0 of 2: ProgramDesc\.blocks "
                                                "should be a message"):
        _proto.decode(b"\x08\x01", "ProgramDesc", "f.pdmodel")
    with pytest.raises(_proto.ProtoError, match=r"OpDesc\.type is not valid UTF-8"):
        _proto.decode(b"\x1a\x01\xff", "OpDesc", "f.pdmodel")


def test_missing_parameters_file_and_shape_mismatch(pd, tmp_path):
    zoo.save_real(pd, zoo.zoo_model("LeNet"), tmp_path / "m")
    params = (tmp_path / "m.pdiparams").read_bytes()
    (tmp_path / "m.pdiparams").unlink()
    with pytest.raises(FileNotFoundError, match=r"m\.pdiparams does not exist"):
        paddle.jit.load(str(tmp_path / "m"))
    (tmp_path / "m.pdiparams").write_bytes(params[:-8])
    with pytest.raises(ValueError, match="truncated"):
        paddle.jit.load(str(tmp_path / "m"))


def test_model_filename_configs(pd, tmp_path):
    inputs, want = zoo.save_real(pd, zoo.zoo_model("LeNet"), tmp_path / "inference")
    layer = paddle.jit.load(str(tmp_path), model_filename="inference.pdmodel",
                            params_filename="inference.pdiparams")
    zoo.assert_close(layer(paddle.to_tensor(inputs[0])).numpy(), want[0])
