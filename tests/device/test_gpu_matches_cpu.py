"""Every GPU code path against the CPU: op families (values and the gradients of a weighted sum),
layer families, AMP float16 and bfloat16, the profiler's CUDA events, the DataLoader feeding a
GPU model through pinned memory, and the vision zoo.

These run on a machine with CuPy and a CUDA GPU and skip cleanly elsewhere (``gpu`` marker).
Each case runs the same function on the same data once on the CPU and once with the GPU as
the device, checks that the GPU results really live on the GPU, and compares the numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import backend

F = paddle.nn.functional

pytestmark = pytest.mark.gpu

# the device compared with the CPU
GPU = "gpu"


def _gpu_ok():
    return backend.cupy_module() is not None


@pytest.fixture
def gpu():
    if not _gpu_ok():
        pytest.skip(f"needs CuPy and a CUDA GPU ({backend.cupy_error()})")
    yield GPU
    paddle.set_device("cpu")


def _r(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed + len(shape) * 7 + sum(shape)).standard_normal(
        shape).astype(dtype)


def _ints(high, *shape, seed=0):
    return np.random.default_rng(seed + 11).integers(0, high, shape).astype("int64")


def _spd(n):
    a = _r(n, n, seed=5)
    return (a @ a.T + n * np.eye(n)).astype("float32")


def _on_device(t, device):
    if device != "cpu":
        assert backend.is_gpu_array(t._data), f"a result is not on the GPU: {t.place}"


def _flat(out):
    if isinstance(out, (list, tuple)):
        return [o for x in out for o in _flat(x)]
    return [out]


def _run(device, fn, arrays, grad):
    """(outputs, input gradients) of ``fn`` on ``device`` as NumPy arrays."""
    paddle.set_device(device)
    try:
        ts = [paddle.to_tensor(a, stop_gradient=not (grad and a.dtype.kind == "f"))
              for a in arrays]
        outs = _flat(fn(*ts))
        for o in outs:
            _on_device(o, device)
        vals = [o.numpy() for o in outs]
        grads = []
        diff = [(o, v) for o, v in zip(outs, vals)
                if grad and v.dtype.kind == "f" and not o.stop_gradient]
        if diff:
            loss = None
            for i, (o, v) in enumerate(diff):
                w = paddle.to_tensor(np.random.default_rng(100 + i).standard_normal(
                    v.shape).astype(v.dtype))
                term = (o * w).sum()
                loss = term if loss is None else loss + term
            loss.backward()
            for t in ts:
                if t.grad is not None:
                    _on_device(t.grad, device)
            grads = [None if t.grad is None else t.grad.numpy() for t in ts]
        return vals, grads
    finally:
        paddle.set_device("cpu")


def _compare(gpu, fn, arrays, grad=True, rtol=1e-4, atol=1e-5):
    cv, cg = _run("cpu", fn, arrays, grad)
    gv, gg = _run(gpu, fn, arrays, grad)
    assert len(cv) == len(gv)
    for c, g in zip(cv, gv):
        assert c.dtype == g.dtype and c.shape == g.shape
        np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)
    assert len(cg) == len(gg)
    for c, g in zip(cg, gg):
        assert (c is None) == (g is None)
        if c is not None:
            np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- op families
X4 = _r(2, 3, 7, 6)
OPS = {
    # math
    "arith": (lambda a, b: (a + b) * a / (b.abs() + 1) - a ** 2, [_r(3, 4), _r(3, 4, seed=1)]),
    "broadcast": (lambda a, b: a * b + b, [_r(3, 1, 4), _r(5, 1)]),
    "exp_log_pow": (lambda a: paddle.exp(a) + paddle.log(a.abs() + 1) + paddle.pow(a, 3),
                    [_r(5)]),
    "trig": (lambda a: paddle.sin(a) * paddle.cos(a) + paddle.tanh(a) + paddle.atan(a),
             [_r(6)]),
    "clip_max_min": (lambda a, b: paddle.clip(a, -0.5, 0.5) + paddle.maximum(a, b)
                     - paddle.minimum(a, b), [_r(3, 4), _r(3, 4, seed=2)]),
    "cumulative": (lambda a: paddle.cumsum(a, axis=1) + paddle.cumprod(a, dim=1), [_r(3, 4)]),
    # reductions and statistics
    "sum_mean": (lambda a: a.sum(axis=1) + a.mean(axis=1) + a.sum(), [_r(3, 4)]),
    "max_min_prod": (lambda a: a.max(axis=0) + a.min(axis=0) + a.prod(axis=0), [_r(3, 4)]),
    "logsumexp_norm": (lambda a: paddle.logsumexp(a, axis=1) + paddle.linalg.norm(a, axis=1),
                       [_r(3, 4)]),
    "var_std": (lambda a: paddle.var(a, axis=0) + paddle.std(a, axis=0), [_r(5, 3)]),
    # linear algebra
    "matmul": (lambda a, b: paddle.matmul(a, b), [_r(2, 3, 4), _r(2, 4, 5)]),
    "einsum": (lambda a, b: paddle.einsum("ij,jk->ik", a, b), [_r(3, 4), _r(4, 2)]),
    "inv_det_solve": (lambda a, b: paddle.linalg.inv(a) + paddle.linalg.det(a)
                      + paddle.linalg.solve(a, b), [_spd(3), _r(3, 3)]),
    "cholesky": (lambda a: paddle.linalg.cholesky(a), [_spd(4)]),
    # manipulation
    "reshape_concat": (lambda a, b: paddle.concat([a.reshape([4, 3]).transpose([1, 0]), b]),
                       [_r(3, 4), _r(2, 4)]),
    "split_stack_flip_roll": (lambda a: paddle.stack(paddle.split(
        paddle.flip(paddle.roll(a, 1, axis=0), [1]), 2, axis=1)), [_r(3, 4)]),
    "gather_scatter": (lambda a, i: paddle.scatter(a, i, paddle.gather(a, i) * 2,
                                                   overwrite=False),
                       [_r(5, 3), np.array([0, 2, 2, 4])]),
    "index_select_take_along": (lambda a, i: paddle.index_select(a, i, axis=1)
                                + paddle.take_along_axis(a, i.reshape([1, 4]).expand([5, 4]),
                                                         axis=1),
                                [_r(5, 3), np.array([0, 2, 2, 1])]),
    "put_along_axis_add": (lambda a, v: paddle.put_along_axis(
        a, paddle.to_tensor(np.array([[0, 1, 1]] * 4)), v, axis=1, reduce="add"),
        [_r(4, 3), _r(4, 3, seed=3)]),
    "put_along_axis_mul": (lambda a, v: paddle.put_along_axis(
        a, paddle.to_tensor(np.array([[0, 1, 1]] * 4)), v, axis=1, reduce="mul"),
        [_r(4, 3), _r(4, 3, seed=3)]),
    "index_add": (lambda a, v: paddle.index_add(a, paddle.to_tensor(np.array([0, 2, 2])), 0, v),
                  [_r(4, 3), _r(3, 3, seed=4)]),
    "pad_tile_expand": (lambda a: F.pad(a, [1, 2, 0, 1]).sum(axis=[2, 3]).tile([2, 1])
                        + a.mean(axis=[2, 3]).expand([2, 3]), [_r(1, 3, 4, 5)]),
    "where_masked": (lambda a, b: paddle.where(a > 0, a, b) + paddle.masked_select(a, a > 0).sum(),
                     [_r(3, 4), _r(3, 4, seed=5)]),
    "getitem_setitem": (lambda a: a[1:, ::2] * 2 + a[paddle.to_tensor([0, 2])][:, ::2].sum(),
                        [_r(3, 4)]),
    # search, sort, logic, creation (no gradients through indices)
    "argmax_topk_sort": (lambda a: (paddle.argmax(a, axis=1), paddle.topk(a, 2)[0],
                                    paddle.sort(a, axis=1), paddle.argsort(a, axis=1)),
                         [_r(4, 5)]),
    "unique_nonzero": (lambda a: (paddle.unique(a), paddle.nonzero(a)),
                       [_ints(4, 3, 5)]),
    "logic": (lambda a, b: (paddle.logical_and(a > 0, b < 0), paddle.isnan(a / a),
                            paddle.equal(a, b)), [_r(3, 4), _r(3, 4, seed=6)]),
    "creation": (lambda a: a + paddle.arange(4, dtype="float32") + paddle.linspace(0, 1, 4)
                 + paddle.eye(3, 4).sum(0) + paddle.full([4], 2.0) + paddle.ones_like(a),
                 [_r(3, 4)]),
    # activations
    "activations": (lambda a: F.relu(a) + F.gelu(a) + F.silu(a) + F.sigmoid(a) + F.elu(a)
                    + F.leaky_relu(a) + F.softplus(a) + F.hardswish(a) + F.mish(a),
                    [_r(3, 5)]),
    "softmax": (lambda a: F.softmax(a, -1) + F.log_softmax(a, -1), [_r(3, 5)]),
    # convolution family
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [_r(2, 3, 9),
                                                                        _r(4, 3, 3), _r(4)]),
    "conv2d_dilated": (lambda x, w: F.conv2d(x, w, padding=2, dilation=2), [X4, _r(4, 3, 3, 3)]),
    "conv2d_batch_inner": (lambda x, w: F.conv2d(x, w, padding=1), [_r(8, 6, 5, 5),
                                                                    _r(4, 6, 3, 3)]),
    "conv2d_nhwc_groups": (lambda x, w: F.conv2d(x, w, padding=1, groups=2, data_format="NHWC"),
                           [_r(2, 5, 6, 4), _r(6, 2, 3, 3)]),
    "conv2d_depthwise": (lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=3),
                         [X4, _r(6, 1, 3, 3)]),
    "conv2d_pointwise": (lambda x, w: F.conv2d(x, w), [_r(2, 3, 10, 10), _r(5, 3, 1, 1)]),
    "conv2d_trimmed_taps": (lambda x, w: F.conv2d(x, w, padding=1), [_r(2, 3, 1, 1),
                                                                     _r(4, 3, 3, 3)]),
    "conv3d": (lambda x, w: F.conv3d(x, w, padding=1), [_r(1, 2, 4, 5, 3), _r(3, 2, 3, 3, 3)]),
    "conv2d_transpose": (lambda x, w: F.conv2d_transpose(x, w, stride=2, padding=1,
                                                         output_padding=1),
                         [X4, _r(3, 2, 3, 3)]),
    "unfold_fold": (lambda x: F.fold(F.unfold(x, 2, paddings=1), [7, 6], 2, paddings=1),
                    [X4]),
    # pooling
    "max_pool_mask": (lambda x: F.max_pool2d(x, 3, 2, padding=1, return_mask=True), [X4]),
    "max_pool1d_3d": (lambda a, b: (F.max_pool1d(a, 2), F.max_pool3d(b, 2, ceil_mode=True)),
                      [_r(2, 3, 9), _r(1, 2, 5, 4, 3)]),
    "avg_pool": (lambda x: F.avg_pool2d(x, 3, 2, padding=1, exclusive=False)
                 + F.avg_pool2d(x, 3, 2, padding=1), [X4]),
    "adaptive_pools": (lambda x: (F.adaptive_avg_pool2d(x, (2, 3)),
                                  F.adaptive_max_pool2d(x, (2, 3), return_mask=True)), [X4]),
    "max_unpool": (lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_mask=True), 2), [X4]),
    # normalisation
    "batch_norm": (lambda x, w, b: F.batch_norm(x, paddle.zeros([3]), paddle.ones([3]), w, b,
                                                training=True), [X4, _r(3), _r(3)]),
    "layer_instance_norm": (lambda x: F.layer_norm(x, x.shape[1:]) + F.instance_norm(x), [X4]),
    "lrn_normalize": (lambda x: F.local_response_norm(x, 3) + F.normalize(x, axis=1), [X4]),
    # losses
    "cross_entropy": (lambda x, y: F.cross_entropy(x, y), [_r(6, 5), _ints(5, 6, 1)]),
    "cross_entropy_soft_smooth": (lambda x, y: F.cross_entropy(x, F.softmax(y), soft_label=True)
                                  + F.cross_entropy(x, paddle.argmax(y, -1, keepdim=True),
                                                    label_smoothing=0.1),
                                  [_r(6, 5), _r(6, 5, seed=7)]),
    "regression_losses": (lambda a, b: F.mse_loss(a, b) + F.l1_loss(a, b)
                          + F.smooth_l1_loss(a, b) + F.binary_cross_entropy_with_logits(
                              a, F.sigmoid(b)) + F.kl_div(F.log_softmax(a), F.softmax(b)),
                          [_r(4, 5), _r(4, 5, seed=8)]),
    "nll": (lambda x, y: F.nll_loss(F.log_softmax(x), y), [_r(6, 5), _ints(5, 6)]),
    # embedding and lookups
    "embedding": (lambda ids, w: F.embedding(ids, w, padding_idx=0), [_ints(10, 4, 6),
                                                                      _r(10, 5)]),
    "one_hot": (lambda ids: F.one_hot(ids, 7), [_ints(7, 5)]),
    # vision functional
    "interpolate": (lambda x: (F.interpolate(x, scale_factor=2, mode="bilinear"),
                               F.interpolate(x, size=[5, 4], mode="nearest")), [X4]),
    "grid_sample": (lambda x, g: F.grid_sample(x, g, align_corners=False),
                    [X4, np.tanh(_r(2, 4, 5, 2))]),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), [_r(1, 8, 3, 3)]),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
                  [_r(2, 5, 2, 4), _r(2, 5, 2, 4, seed=1), _r(2, 5, 2, 4, seed=2)]),
    # spectral
    "fft": (lambda a: (paddle.fft.rfft(a).abs(), paddle.fft.fft2(a).real()), [_r(4, 6)]),
    # graph message passing (scatter reductions on the GPU)
    "send_u_recv": (lambda x: [paddle.geometric.send_u_recv(
        x, paddle.to_tensor(np.array([0, 1, 2, 0])), paddle.to_tensor(np.array([1, 2, 1, 0])),
        reduce_op=op) for op in ("sum", "mean", "max", "min")], [_r(3, 4)]),
    "segment": (lambda x: (paddle.geometric.segment_sum(x, paddle.to_tensor([0, 0, 1, 3])),
                           paddle.geometric.segment_max(x, paddle.to_tensor([0, 0, 1, 3]))),
                [_r(4, 3)]),
}
NO_GRAD = {"argmax_topk_sort", "unique_nonzero", "logic"}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_family_matches_cpu(gpu, name):
    fn, arrays = OPS[name]
    _compare(gpu, fn, arrays, grad=name not in NO_GRAD)


def test_sparse_matmul_matches_cpu(gpu):
    dense = _r(4, 5)
    dense[dense < 0.3] = 0
    y = _r(5, 3)

    def fn(a, b):
        return (paddle.sparse.matmul(a.to_sparse_csr(), b),
                paddle.sparse.matmul(a.to_sparse_coo(2), b))

    _compare(gpu, fn, [dense, y], grad=False)


def test_random_on_gpu(gpu):
    paddle.set_device(gpu)
    paddle.seed(7)
    a = paddle.randn([20000])
    b = paddle.uniform([20000], min=-1.0, max=1.0)
    _on_device(a, gpu)
    assert a.dtype == paddle.float32 and b.dtype == paddle.float32
    np.testing.assert_allclose([a.numpy().mean(), a.numpy().std()], [0, 1], atol=0.03)
    assert -1 <= b.numpy().min() and b.numpy().max() < 1
    paddle.seed(7)
    np.testing.assert_array_equal(paddle.randn([20000]).numpy(), a.numpy())  # reproducible
    keep = F.dropout(paddle.ones([20000]), p=0.25).numpy()
    assert set(np.unique(keep).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert abs((keep == 0).mean() - 0.25) < 0.02


# --------------------------------------------------------------------------- layer families
LAYERS = {
    "linear": (lambda: paddle.nn.Linear(6, 4), _r(3, 6)),
    "conv_bn_relu": (lambda: paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3, padding=1),
                                                  paddle.nn.BatchNorm2D(4), paddle.nn.ReLU(),
                                                  paddle.nn.MaxPool2D(2)), X4),
    "conv_transpose": (lambda: paddle.nn.Conv2DTranspose(3, 2, 3, stride=2), X4),
    "norms": (lambda: paddle.nn.Sequential(paddle.nn.GroupNorm(1, 3),
                                           paddle.nn.InstanceNorm2D(3),
                                           paddle.nn.LayerNorm([7, 6])), X4),
    "embedding": (lambda: paddle.nn.Embedding(10, 4, padding_idx=0), _ints(10, 3, 5)),
    "lstm": (lambda: paddle.nn.LSTM(5, 6, num_layers=2, direction="bidirect"), _r(2, 4, 5)),
    "gru": (lambda: paddle.nn.GRU(5, 6), _r(2, 4, 5)),
    "simple_rnn": (lambda: paddle.nn.SimpleRNN(5, 6), _r(2, 4, 5)),
    "attention": (lambda: paddle.nn.MultiHeadAttention(8, 2), _r(2, 5, 8)),
    "transformer_encoder": (lambda: paddle.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                            _r(2, 5, 8)),
    "prelu_pool": (lambda: paddle.nn.Sequential(paddle.nn.PReLU(3),
                                                paddle.nn.AdaptiveAvgPool2D(2),
                                                paddle.nn.Flatten(), paddle.nn.Linear(12, 2)),
                   X4),
}


def _layer_run(device, make, x, state):
    paddle.set_device(device)
    try:
        paddle.seed(0)
        layer = make()
        if state is not None:
            layer.set_state_dict({k: paddle.to_tensor(v) for k, v in state.items()})
        t = paddle.to_tensor(x, stop_gradient=x.dtype.kind != "f")
        out = _flat(layer(t))
        loss = None
        for i, o in enumerate(out):
            _on_device(o, device)
            if o.dtype in (paddle.float32, paddle.float64):
                w = np.random.default_rng(i).standard_normal(o.shape).astype("float32")
                term = (o * paddle.to_tensor(w)).sum()
                loss = term if loss is None else loss + term
        loss.backward()
        grads = {n: p.grad.numpy() for n, p in layer.named_parameters() if p.grad is not None}
        sd = {k: v.numpy() for k, v in layer.state_dict().items()}
        return [o.numpy() for o in out], grads, sd
    finally:
        paddle.set_device("cpu")


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_family_matches_cpu(gpu, name):
    make, x = LAYERS[name]
    cout, cgrads, csd = _layer_run("cpu", make, x, None)
    paddle.set_device("cpu")
    paddle.seed(0)
    state = {k: v.numpy() for k, v in make().state_dict().items()}
    gout, ggrads, gsd = _layer_run(gpu, make, x, state)
    for c, g in zip(cout, gout):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)
    assert cgrads.keys() == ggrads.keys() and cgrads
    for k in cgrads:
        np.testing.assert_allclose(ggrads[k], cgrads[k], rtol=1e-4, atol=1e-5, err_msg=k)
    for k in csd:  # BatchNorm's running statistics included
        np.testing.assert_allclose(gsd[k], csd[k], rtol=1e-4, atol=1e-5, err_msg=k)


# --------------------------------------------------------------------------- AMP
def _amp_run(device, dtype, level):
    # the weights are drawn on the CPU on both runs (a GPU initialises from its own stream)
    paddle.set_device("cpu")
    try:
        paddle.seed(0)
        net = paddle.nn.Sequential(paddle.nn.Conv2D(3, 8, 3, padding=1), paddle.nn.BatchNorm2D(8),
                                   paddle.nn.ReLU(), paddle.nn.Flatten(),
                                   paddle.nn.Linear(8 * 7 * 6, 5))
        net.to(device)
        paddle.set_device(device)
        opt = paddle.optimizer.Momentum(learning_rate=0.01, parameters=net.parameters())
        if level == "O2":
            net, opt = paddle.amp.decorate(models=net, optimizers=opt, level="O2", dtype=dtype)
        scaler = paddle.amp.GradScaler(init_loss_scaling=128.0)
        x = paddle.to_tensor(X4)
        y = paddle.to_tensor(_ints(5, 2))
        with paddle.amp.auto_cast(level=level, dtype=dtype):
            logits = net(x)
            loss = F.cross_entropy(logits, y)
        _on_device(logits, device)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        params = [p.astype("float32").numpy() for p in net.parameters()]
        return logits.dtype, logits.astype("float32").numpy(), float(loss), params
    finally:
        paddle.set_device("cpu")


@pytest.mark.parametrize("level", ["O1", "O2"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_amp_matches_cpu(gpu, dtype, level):
    cdt, clog, closs, cparams = _amp_run("cpu", dtype, level)
    gdt, glog, gloss, gparams = _amp_run(gpu, dtype, level)
    assert gdt == cdt
    if level == "O2":
        assert gdt == getattr(paddle, dtype)
    tol = 2e-2 if dtype == "bfloat16" else 5e-3
    np.testing.assert_allclose(glog, clog, rtol=tol, atol=tol)
    np.testing.assert_allclose(gloss, closs, rtol=tol, atol=tol)
    for g, c in zip(gparams, cparams):
        np.testing.assert_allclose(g, c, rtol=tol, atol=tol)


# --------------------------------------------------------------------------- profiler
def test_profiler_records_cuda_events_of_a_training_step(gpu):
    paddle.set_device(gpu)
    net = paddle.nn.Sequential(paddle.nn.Linear(32, 64), paddle.nn.ReLU(),
                               paddle.nn.Linear(64, 4))
    opt = paddle.optimizer.Adam(parameters=net.parameters())
    prof = paddle.profiler
    with prof.Profiler(targets=[prof.ProfilerTarget.CPU, prof.ProfilerTarget.GPU],
                       profile_memory=True, on_trace_ready=lambda p: None) as p:
        loss = net(paddle.randn([16, 32])).mean()
        loss.backward()
        opt.step()
    res = p.profiler_result
    kernels = [e for e in res.events if e.type == "Kernel"]
    assert len(kernels) >= 5 and all(e.device.startswith("gpu") for e in kernels)
    assert all(e.end_ns >= e.start_ns for e in kernels)


# --------------------------------------------------------------------------- DataLoader
class _Squares(paddle.io.Dataset):
    def __len__(self):
        return 24

    def __getitem__(self, i):
        x = np.full((4,), i, dtype="float32")
        return x, np.int64(i % 3)


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_feeds_a_gpu_model(gpu, workers):
    losses = {}
    for device in ("cpu", gpu):
        paddle.set_device("cpu")  # the same initial weights on both runs
        paddle.seed(0)
        net = paddle.nn.Linear(4, 3)
        net.to(device)
        paddle.set_device(device)
        opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=net.parameters())
        loader = paddle.io.DataLoader(_Squares(), batch_size=8, num_workers=workers)
        seen = []
        for x, y in loader:
            _on_device(x, device)
            _on_device(y, device)
            seen.append(x.numpy()[:, 0])
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.setdefault(device, []).append(float(loss))
        np.testing.assert_array_equal(np.concatenate(seen), np.arange(24))
        paddle.set_device("cpu")
    np.testing.assert_allclose(losses[gpu], losses["cpu"], rtol=1e-5)


def test_pinned_copies_to_the_gpu(gpu):
    host = _r(64, 33)
    dev = backend.to_gpu(host, 0)
    assert backend.is_gpu_array(dev)
    np.testing.assert_array_equal(backend.to_numpy(dev), host)
    empty = backend.to_gpu(np.zeros((0, 3), "float32"), 0)
    assert empty.shape == (0, 3)


# --------------------------------------------------------------------------- vision zoo
ZOO = {"resnet18": 64, "resnet50": 64, "mobilenet_v1": 64, "mobilenet_v2": 64,
       "mobilenet_v3_small": 64, "shufflenet_v2_x0_25": 64, "squeezenet1_1": 64,
       "densenet121": 64, "vgg11": 64, "alexnet": 224, "googlenet": 224,
       "inception_v3": 299, "LeNet": 28}


@pytest.mark.parametrize("name", sorted(ZOO))
def test_vision_zoo_matches_cpu(gpu, name):
    size = ZOO[name]
    chans = 1 if name == "LeNet" else 3
    x = _r(1, chans, size, size)
    outs = {}
    state = None
    for device in ("cpu", gpu):
        paddle.set_device(device)
        paddle.seed(0)
        model = getattr(paddle.vision.models, name)()
        if state is None:
            state = {k: v.numpy() for k, v in model.state_dict().items()}
        else:  # the same weights on the GPU
            model.set_state_dict({k: paddle.to_tensor(v) for k, v in state.items()})
        model.eval()
        with paddle.no_grad():
            out = _flat(model(paddle.to_tensor(x)))
        for o in out:
            _on_device(o, device)
        outs[device] = [o.numpy() for o in out]
        paddle.set_device("cpu")
    for g, c in zip(outs[gpu], outs["cpu"]):
        np.testing.assert_allclose(g, c, rtol=2e-3, atol=2e-4)


def test_jit_save_of_a_gpu_model_loads_and_matches_the_cpu(gpu, tmp_path):
    """jit.save traces a model whose parameters live on the GPU (the free-dim check compares
    traces of device arrays) and jit.load runs the file on either device."""
    from paddle_hl.static import InputSpec

    paddle.seed(3)
    net = paddle.vision.models.LeNet()
    x = _r(3, 1, 28, 28, seed=4)
    want = net(paddle.to_tensor(x)).numpy()
    paddle.set_device(gpu)
    net.to(device=gpu)
    paddle.jit.save(net, str(tmp_path / "lenet"), [InputSpec([None, 1, 28, 28], "float32", "x")])
    loaded = paddle.jit.load(str(tmp_path / "lenet"))
    got = loaded(paddle.to_tensor(x))
    _on_device(got, gpu)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
