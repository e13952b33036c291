"""Importing paddle_hl, every submodule and every domain never imports CuPy.

CuPy is optional and its import costs seconds (and initialises CUDA); it is loaded the first
time a GPU is asked for. The check runs in a fresh interpreter with an import hook that records
(and refuses, as on a machine without CuPy) every attempt to import cupy or cupyx, so an import
inside a try/except at module level is caught too, whether or not CuPy is installed.
"""

import json
import subprocess
import sys

PROBE = r"""
import importlib, json, pkgutil, sys

attempts = []


class RefuseCupy:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("cupy", "cupyx", "cupy_backends"):
            attempts.append((name, sorted(m for m in sys.modules if m.startswith("paddle_hl"))))
            raise ImportError(f"{name} refused by the test")
        return None


sys.meta_path.insert(0, RefuseCupy())
import paddle_hl  # noqa: E402

# the CuPy backend module itself imports CuPy, by design: it is loaded on first GPU use only
SKIP = {"paddle_hl.backend._cupy"}
ROOTS = ["paddle_hl", "paddle_hl.vision", "paddle_hl.audio", "paddle_hl.text",
         "paddle_hl.geometric", "paddle_hl.hub"]
imported, failed = [], {}
for root in ROOTS:
    mod = importlib.import_module(root)
    imported.append(root)
    for info in pkgutil.walk_packages(mod.__path__, root + "."):
        if info.name in SKIP:
            continue
        try:
            importlib.import_module(info.name)
            imported.append(info.name)
        except Exception as e:  # an optional extra that is not installed
            failed[info.name] = f"{type(e).__name__}: {e}"
print(json.dumps({"imported": imported, "failed": failed, "attempts": [a[0] for a in attempts],
                  "cupy_loaded": any(m.split(".")[0] in ("cupy", "cupyx")
                                     for m in sys.modules)}))
"""


def test_no_module_imports_cupy_at_import_time():
    res = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["attempts"] == [], out["attempts"]
    assert not out["cupy_loaded"]
    # the walk really covered the package and the domains
    names = set(out["imported"])
    for expected in ("paddle_hl.nn.functional.conv", "paddle_hl.backend.windows",
                     "paddle_hl.optimizer.adam", "paddle_hl.vision.models",
                     "paddle_hl.audio", "paddle_hl.text", "paddle_hl.geometric",
                     "paddle_hl.profiler", "paddle_hl.device.cuda", "paddle_hl.amp"):
        assert expected in names, expected
    # no failure comes from a refused CuPy import
    assert not any("cupy" in msg for msg in out["failed"].values()), out["failed"]


def test_cpu_work_needs_no_cupy():
    # with CuPy refused, a training step on the CPU runs and never asks for it
    code = PROBE.split("sys.meta_path.insert(0, RefuseCupy())")[0] + r"""
sys.meta_path.insert(0, RefuseCupy())
import paddle_hl as paddle
net = paddle.nn.Sequential(paddle.nn.Conv2D(1, 2, 3), paddle.nn.MaxPool2D(2), paddle.nn.Flatten(),
                           paddle.nn.Linear(2 * 3 * 3, 2))
opt = paddle.optimizer.Adam(parameters=net.parameters())
loss = net(paddle.randn([2, 1, 8, 8])).sum()
loss.backward()
opt.step()
print(json.dumps(attempts))
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == []
