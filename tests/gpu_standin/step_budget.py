"""Count the device-to-host transfers of training steps on the GPU path, under the stand-in.

Run as a script (``python -m tests.gpu_standin.step_budget [case ...]``): it installs the
CuPy stand-in, trains ResNet-18 on a 2x3x32x32 batch on the "GPU" and prints one JSON line per
case with the transfers of one step (after a warm-up step) and the kernels it launched. The
cases: Adam and Momentum in float32, AMP O1 with GradScaler, AMP O2 with GradScaler.
"""

from __future__ import annotations

import json
import sys

CASES = ("adam", "momentum", "amp_o1", "amp_o2")


def run(case, steps=2):
    import paddle_hl as paddle
    from tests.gpu_standin import fakecupy

    paddle.set_device("gpu")
    paddle.seed(0)
    model = paddle.vision.models.resnet18(num_classes=10)
    if case == "momentum":
        opt = paddle.optimizer.Momentum(0.01, parameters=model.parameters(), weight_decay=1e-4)
    else:
        opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    level = {"amp_o1": "O1", "amp_o2": "O2"}.get(case)
    scaler = None
    if level == "O2":
        model, opt = paddle.amp.decorate(model, opt, level="O2", dtype="float16")
    if level:
        scaler = paddle.amp.GradScaler(init_loss_scaling=1.0)
    x = paddle.randn([2, 3, 32, 32])
    y = paddle.to_tensor([[1], [7]], dtype="int64")
    loss_fn = paddle.nn.CrossEntropyLoss()
    per_step = []
    for _ in range(steps):
        fakecupy.stats.reset()
        if level:
            with paddle.amp.auto_cast(level=level, dtype="float16"):
                loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        opt.clear_grad()
        per_step.append(fakecupy.stats.snapshot())
    last = per_step[-1]
    return {"case": case, "d2h": last["d2h"], "implicit": last["implicit"],
            "syncs": last["syncs"], "launches": sum(last["launches"].values()),
            "loss": float(loss)}


def main(argv):
    from tests.gpu_standin import fakecupy

    fakecupy.install()
    for case in argv or CASES:
        print(json.dumps(run(case)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
