"""Collectives on GPU tensors through NCCL (CuPy), on 2 ranks with a GPU each, compared with
the MPI path on CPU tensors; and the fallback through host memory when ranks share a GPU.
Skipped without CuPy, NCCL, or enough GPUs (NCCL needs one GPU per rank)."""

from __future__ import annotations

import pytest

from .test_multiprocess import _launch, _ok

pytestmark = pytest.mark.gpu


def _gpus() -> int:
    from paddle_hl import backend

    return backend.device_count()


def _need_nccl(gpus):
    pytest.importorskip("cupy")
    found = _gpus()
    if found < gpus:
        pytest.skip(f"needs {gpus} GPU(s), found {found}")
    from paddle_hl.distributed import _nccl

    if _nccl.nccl_module() is None:
        pytest.skip(f"NCCL is not usable: {_nccl.unavailable_reason()}")


@pytest.mark.parametrize("n", [2])
def test_nccl_collectives_and_data_parallel_match_mpi(n):
    _need_nccl(n)
    _ok(_launch(n, "nccl_collectives.py", timeout=300), n)


def test_ranks_sharing_a_gpu_fall_back_to_mpi_with_one_warning():
    _need_nccl(1)
    # both ranks see one GPU only: NCCL refuses a GPU shared by two ranks
    _ok(_launch(2, "nccl_fallback.py", timeout=300, CUDA_VISIBLE_DEVICES="0"), 2)
