"""DataLoader workers start safely beside threads running OpenBLAS products, and still take
datasets defined in ``__main__`` (a script, ``python -c``, a notebook) or inside a function.

Every check runs in a child process in its own session, killed with all its processes when it
overruns, so a hang fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from ._helpers import ROOT, env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def _run(args, timeout):
    """Run ``python args...``; on timeout kill its whole process group and fail."""
    p = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env(), text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"the child hung for {timeout} s; its output:\n{out}\n{err[-3000:]}")
    assert p.returncode == 0, f"exit code {p.returncode}\n{out}\n{err[-3000:]}"
    return out, err


HANG = """
import threading
import numpy as np
import paddle_hl as paddle
from paddle_hl.io import DataLoader, Dataset

class Squares(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.full((3,), i * i, "float32")

stop = threading.Event()
busy = threading.Event()

def products():
    a = np.random.default_rng(0).standard_normal((2000, 2000))
    while not stop.is_set():
        np.dot(a, a)
        busy.set()

t = threading.Thread(target=products, daemon=True)
t.start()
busy.wait()
for r in range(4):
    got = [b.numpy()[:, 0].tolist() for b in DataLoader(Squares(), batch_size=4, num_workers=2)]
    assert got == [[0.0, 1.0, 4.0, 9.0], [16.0, 25.0, 36.0, 49.0]], got
    print("round", r, "ok", flush=True)
stop.set()
t.join()
print("done")
"""


def test_workers_start_while_another_thread_runs_blas_products():
    """Forking the main process while OpenBLAS works in another thread hung in os.fork."""
    out, _ = _run(["-c", HANG], timeout=90)
    assert out.split() == ["round", "0", "ok", "round", "1", "ok", "round", "2", "ok",
                           "round", "3", "ok", "done"]


SCRIPT = """
import numpy as np
from paddle_hl.io import DataLoader, Dataset

print("top level ran")  # once: workers never import this script again
OFFSET = 100.0

def shift(v):
    return v + OFFSET

class Shifted(Dataset):
    def __init__(self, n):
        self.n = n
        self.f = lambda v: shift(v) * 2.0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.f(np.full((2,), float(i), "float32"))

seen = []
def init(worker_id):
    import paddle_hl.io as io
    assert io.get_worker_info().id == worker_id

# no __main__ guard: the loader is built at the top level, as with fork
loader = DataLoader(Shifted(6), batch_size=3, num_workers=2, worker_init_fn=init)
print([b.numpy()[:, 0].tolist() for b in loader])
"""


def test_datasets_defined_in_main_reach_the_workers(tmp_path):
    expected = "[[200.0, 202.0, 204.0], [206.0, 208.0, 210.0]]"
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(SCRIPT))
    for args in ([str(path)], ["-c", SCRIPT]):  # a script file; code with no file (notebook)
        out, err = _run(args, timeout=90)
        assert out.splitlines() == ["top level ran", expected], (args[0], out, err)
        assert "Warning" not in err, err


UNPICKLABLE = """
import threading, warnings
import numpy as np
from paddle_hl.io import DataLoader, Dataset

class Locked(Dataset):
    def __init__(self):
        self.lock = threading.Lock()  # cannot be pickled

    def __len__(self):
        return 4

    def __getitem__(self, i):
        with self.lock:
            return np.full((1,), i, "float32")

with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    print([b.numpy().ravel().tolist() for b in DataLoader(Locked(), batch_size=2,
                                                          num_workers=2)])
print(sum("cannot be sent to worker processes" in str(x.message) for x in w))
"""


def test_a_dataset_that_cannot_be_pickled_still_loads_with_a_warning():
    out, _ = _run(["-c", UNPICKLABLE], timeout=90)
    assert out.splitlines() == ["[[0.0, 1.0], [2.0, 3.0]]", "1"]
