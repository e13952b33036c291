"""Compile the GPU backend's CUDA sources with NVRTC, without a GPU.

NVRTC (the ``nvidia-cuda-nvrtc`` wheel) compiles CUDA C++ to PTX on any machine: no driver and
no device are involved. The kernels are wrapped as CuPy's ``ElementwiseKernel`` wraps them
(its ``carray.cuh`` indexing, one ``typedef`` per type placeholder, its ``float16`` and
``bfloat16`` device classes from CuPy's own headers), so a body that CuPy could not compile for
a dtype fails here too. CuPy's headers come from the installed CuPy package (found without
importing it), the CUDA ``cuda_fp16.h`` / ``cuda_bf16.h`` headers from the
``nvidia-cuda-runtime`` wheel.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import pathlib
import re

__all__ = ["missing", "compile_program", "elementwise_source"]

# C++ spellings of the dtypes as CuPy's kernels name them
CTYPES = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float", "float64": "double"}


def _site_dirs(top):
    # searched on sys.path, not imported (and not taken from sys.modules, where the CPU
    # stand-in for CuPy may sit)
    spec = importlib.machinery.PathFinder.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [pathlib.Path(p) for p in spec.submodule_search_locations]


def _nvrtc_library():
    for root in _site_dirs("nvidia"):
        found = sorted(root.glob("cu1*/lib/libnvrtc.so.1*")) + sorted(
            root.glob("cuda_nvrtc/lib/libnvrtc.so.1*"))
        found = [f for f in found if "builtins" not in f.name]
        if found:
            return found[-1]
    return None


def _cuda_include():
    for root in _site_dirs("nvidia"):
        for inc in sorted(root.glob("cu1*/include")) + sorted(root.glob("cuda_runtime/include")):
            if (inc / "cuda_bf16.h").exists():
                return inc
    return None


def _cupy_include():
    for root in _site_dirs("cupy"):
        inc = root / "_core" / "include"
        if (inc / "cupy" / "bfloat16.cuh").exists():
            return inc
    return None


def missing():
    """Why the compile check cannot run here ('' when it can)."""
    if _nvrtc_library() is None:
        return "the NVRTC wheel is not installed (pip install nvidia-cuda-nvrtc)"
    if _cuda_include() is None:
        return ("the CUDA headers (cuda_fp16.h, cuda_bf16.h) are not installed "
                "(pip install nvidia-cuda-runtime)")
    if _cupy_include() is None:
        return "CuPy's headers are not installed (pip install cupy-cuda13x)"
    return ""


_lib = None


def _nvrtc():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(str(_nvrtc_library()))
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        _lib = lib
    return _lib


def _check(rc, what):
    if rc != 0:
        msg = _nvrtc().nvrtcGetErrorString(rc).decode()
        raise RuntimeError(f"NVRTC {what} failed: {msg} ({rc})")


def compile_program(source, name="paddle_hl_check.cu", arch="compute_90"):
    """Compile ``source`` to PTX; returns ``(ok, log)``. The default architecture is the
    Hopper generation (float16 and bfloat16 arithmetic in hardware)."""
    lib = _nvrtc()
    prog = ctypes.c_void_p()
    _check(lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0,
                                  None, None), "nvrtcCreateProgram")
    try:
        cccl = _cupy_include() / "cupy" / "_cccl"
        opts = [f"--gpu-architecture={arch}", "--std=c++17", f"-I{_cupy_include()}",
                f"-I{cccl / 'libcudacxx'}", f"-I{cccl / 'thrust'}",
                f"-I{cccl / 'cub'}", f"-I{_cuda_include()}", "-default-device"]
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        _check(lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "nvrtcGetProgramLogSize")
        buf = ctypes.create_string_buffer(size.value)
        _check(lib.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        return rc == 0, buf.value.decode(errors="replace")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


_PARAM = re.compile(r"^\s*(\w+)\s+(\w+)\s*$")


def _params(spec):
    out = []
    for item in spec.split(","):
        m = _PARAM.match(item)
        if m is None:
            raise ValueError(f"elementwise_source: cannot read the parameter {item!r}")
        out.append((m.group(1), m.group(2)))
    return out


def elementwise_source(kname, ins, outs, body, types, tag):
    """One kernel as CuPy's ElementwiseKernel generates it, in ``namespace tag`` (so many
    instantiations share one program). ``types`` maps each placeholder to a dtype name."""
    lines = [f"namespace {tag} {{"]
    placeholders = {t for t, _ in _params(ins) + _params(outs) if t not in CTYPES}
    for ph in sorted(placeholders):
        lines.append(f"typedef {CTYPES[types[ph]]} {ph};")
    args, loads = [], []
    for t, n in _params(ins):
        ct = t if t in placeholders else CTYPES[t]
        if n in _scalar_names(ins, body):
            args.append(f"const {ct} {n}")
        else:
            args.append(f"CArray<{ct}, 1, true, true> _raw_{n}")
            loads.append(f"const {ct} {n} = _raw_{n}[_ind.get()];")
    for t, n in _params(outs):
        ct = t if t in placeholders else CTYPES[t]
        args.append(f"CArray<{ct}, 1, true, true> _raw_{n}")
        loads.append(f"{ct} &{n} = _raw_{n}[_ind.get()];")
    args.append("CIndexer<1, true> _ind")
    lines.append(f"__global__ void {kname}({', '.join(args)}) {{")
    lines.append("  CUPY_FOR(i, _ind.size()) {")
    lines.append("    _ind.set(i);")
    lines.extend("    " + ld for ld in loads)
    lines.append(f"    {body};")
    lines.append("  }")
    lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# the array inputs of the update kernels (the gradient and the beta powers); every other input
# is a hyperparameter, passed by value
ARRAY_INPUTS = ("g", "b1p", "b2p")


def _scalar_names(ins, body):
    return {n for _, n in _params(ins) if n not in ARRAY_INPUTS}


HEADER = ("#include <cupy/complex.cuh>\n#include <cupy/carray.cuh>\n"
          "#include <cupy/atomics.cuh>\n#include <cupy/math_constants.h>\n"
          "#include <cupy/float16.cuh>\n#include <cupy/bfloat16.cuh>\n")
