#!/usr/bin/env bash
# The first-GPU run, in one command: correctness on the card, then the benchmarks.
#
#   OUT=/some/folder bash benchmarks/gpu_check.sh
#
# Runs from a plain copy of the checkout (no install: PYTHONPATH is the checkout, and the
# package finds vision/, audio/, ... beside it) in at most GPU_CHECK_BUDGET seconds (530 by
# default: under 9 minutes with start-up), needs no network and installs nothing. It writes
# these files to $OUT (7, each phase's result in summary.txt even when a phase fails or is
# cut off):
#
#   summary.txt    one line per phase: its exit status, its time, and what it found
#   env.txt        versions (Python, NumPy, CuPy, CUDA, PyTorch) and nvidia-smi
#   kernels.xml    the kernel compile check: every fused kernel compiled by CuPy on the card
#                  (and by NVRTC for every float dtype when the NVRTC wheel is there)
#   gpu_marked.xml the gpu-marked tests
#   suite.xml      the whole suite with the GPU as the default device, folder by folder
#                  (GPU-relevant folders first) under a time cap; folders not reached or cut
#                  off are listed in summary.txt
#   bench.txt      benchmarks/gpu.py: ResNet-50 (float32, AMP O1 float16 and bfloat16),
#                  a Transformer encoder layer, 200 tiny ops, side by side with PyTorch CUDA,
#                  with the kernels and host syncs per step
#   log.txt        the output of every phase
#
# Without a GPU every phase fails within seconds (the suite refuses to start with the GPU as
# default device, the benchmark says what is missing) and summary.txt says so.
#
# GPU_CHECK_STANDIN=1 runs every Python process of the check on the CPU stand-in for CuPy
# (tests/gpu_standin), to try this script's own logic (caps, cut-off folders, the merged
# junit, the benchmark tables) on a machine without a GPU; GPU_CHECK_WORKERS sets the pytest
# workers (8).

set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:?set OUT to the folder the results go to}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
BUDGET=${GPU_CHECK_BUDGET:-530}
START=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
NW=${GPU_CHECK_WORKERS:-8}
if [ "${GPU_CHECK_STANDIN:-0}" = 1 ]; then
    printf 'from tests.gpu_standin import fakecupy\nfakecupy.install(n_devices=2)\n' \
        > "$WORK/sitecustomize.py"
    export PYTHONPATH="$WORK:$PYTHONPATH"
fi
export PYTHONDONTWRITEBYTECODE=1
unset PADDLE_HL_TEST_DEVICE
SUMMARY=$OUT/summary.txt
LOG=$OUT/log.txt
: > "$SUMMARY"
: > "$LOG"

left() { echo $((BUDGET - ($(date +%s) - START))); }

note() { echo "$*" | tee -a "$SUMMARY"; }

# run NAME CAP COMMAND...: the command under `timeout`, capped at CAP seconds and at what is
# left of the budget; its output goes to log.txt and its status to summary.txt
run() {
    local name=$1 cap=$2 t0 rc l
    shift 2
    l=$(($(left) - 10))
    ((cap > l)) && cap=$l
    if ((cap < 15)); then
        note "$name: not run (the time budget is spent)"
        return 124
    fi
    echo "===== $name (cap ${cap}s) $(date -u +%H:%M:%S)" >> "$LOG"
    t0=$(date +%s)
    timeout -k 10 "$cap" "$@" >> "$LOG" 2>&1
    rc=$?
    local how="rc=$rc"
    ((rc == 124 || rc == 137)) && how="cut off at ${cap}s (rc=$rc)"
    note "$name: $how, $(($(date +%s) - t0))s"
    return $rc
}

# --------------------------------------------------------------------------- 1. versions
{
    echo "date: $(date -u)"
    echo "checkout: $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
    "$PY" - <<'EOF' 2>&1
import platform, sys
print("python", sys.version.split()[0], platform.platform())
import numpy
print("numpy", numpy.__version__)
try:
    import cupy
    print("cupy", cupy.__version__)
    try:
        rt = cupy.cuda.runtime
        print("CUDA runtime", rt.runtimeGetVersion(), "driver", rt.driverGetVersion(),
              "devices", rt.getDeviceCount())
        p = rt.getDeviceProperties(0)
        print("device 0:", p["name"].decode() if isinstance(p["name"], bytes) else p["name"],
              f"cc {p['major']}.{p['minor']}, {p['totalGlobalMem'] / 2**30:.0f} GiB")
    except Exception as e:
        print("CUDA not usable:", type(e).__name__, e)
except ImportError as e:
    print("cupy not importable:", e)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "available", torch.cuda.is_available())
except ImportError:
    print("torch not installed")
for mod in ("numba", "scipy", "pytest", "xdist", "pytest_timeout", "mpi4py"):
    try:
        m = __import__(mod)
        print(mod, getattr(m, "__version__", "present"))
    except ImportError:
        print(mod, "missing")
from paddle_hl import backend
print("paddle_hl GPU backend:", "usable" if backend.gpu_available() else backend.gpu_error())
EOF
    echo "----- nvidia-smi"
    timeout 20 nvidia-smi 2>&1 || echo "nvidia-smi not available"
} > "$OUT/env.txt" 2>&1
GPU_OK=$("$PY" -c "from paddle_hl import backend; print(int(backend.gpu_available()))" 2>/dev/null)
if [ "$GPU_OK" = 1 ]; then
    note "versions: env.txt ($(grep -m1 '^device 0' "$OUT/env.txt"))"
else
    note "versions: env.txt; NO GPU: $("$PY" -c 'from paddle_hl import backend; print(backend.gpu_error())' 2>&1 | tail -1)"
fi

PYTEST=("$PY" -m pytest -q -p no:cacheprovider -p no:randomly -o "addopts=" -rfE)

# --------------------------------------------------------------------------- 2. kernels
run "kernel compile check (kernels.xml)" 60 "${PYTEST[@]}" -n 0 --timeout 50 \
    --junitxml="$OUT/kernels.xml" tests/device/test_gpu_kernels_compile.py \
    tests/device/test_nvrtc_compile.py

# --------------------------------------------------------------------------- 3. gpu-marked
PADDLE_HL_TEST_DEVICE=gpu run "gpu-marked tests (gpu_marked.xml)" 130 "${PYTEST[@]}" -n "$NW" \
    --timeout 90 --session-timeout 100 -m gpu --junitxml="$OUT/gpu_marked.xml" tests

# --------------------------------------------------------------------------- 4. the suite
# folder by folder, GPU-relevant ones first, each with its own junit file (a run cut off by
# the cap still leaves the earlier folders' results), merged into suite.xml at the end
# 150 s at most, and at least BENCH_RESERVE (200) s of the budget kept for the benchmarks
SUITE_END=$(($(date +%s) + 150))
RESERVED_END=$((START + BUDGET - ${BENCH_RESERVE:-200}))
((SUITE_END > RESERVED_END)) && SUITE_END=$RESERVED_END
FIRST="device optimizer backend amp autograd tensor nn framework vision io jit hapi"
FOLDERS=""
for f in $FIRST; do [ -d "tests/$f" ] && FOLDERS="$FOLDERS tests/$f"; done
for d in tests/*/; do
    d=${d%/}
    case " $FOLDERS " in *" $d "*) continue ;; esac
    [ "$(basename "$d")" = gpu_standin ] && continue
    [ "$(basename "$d")" = __pycache__ ] && continue
    FOLDERS="$FOLDERS $d"
done
FOLDERS="$FOLDERS tests/test_*.py"
NOT_REACHED=""
i=0
if [ "$GPU_OK" != 1 ]; then
    # fails at once without a GPU (the suite refuses the GPU as default device), said once
    PADDLE_HL_TEST_DEVICE=gpu run "suite with the GPU as default device" 30 \
        "${PYTEST[@]}" -n 0 tests/device
    NOT_REACHED="(no GPU)"
else
    for f in $FOLDERS; do
        cap=$((SUITE_END - $(date +%s)))
        if ((cap < 20 || $(left) < 30)); then
            NOT_REACHED="$NOT_REACHED $f"
            continue
        fi
        i=$((i + 1))
        # pytest stops itself (and writes its junit) at the session timeout, well before
        # `timeout` would kill it
        # (not the slow tests, nor the CPU stand-in's own checks: CPU work, run in CI)
        PADDLE_HL_TEST_DEVICE=gpu run "suite $f" "$cap" "${PYTEST[@]}" -n "$NW" --timeout 90 \
            --session-timeout $((cap * 2 / 3)) -m "not slow" \
            --ignore=tests/device/test_gpu_standin.py \
            --junitxml="$WORK/suite-$(printf %02d $i).xml" $f
    done
fi
"$PY" - "$WORK" "$OUT/suite.xml" <<'EOF' >> "$LOG" 2>&1
import glob, sys, xml.etree.ElementTree as ET
print()  # (a cut-off run leaves its progress line open)
work, out = sys.argv[1], sys.argv[2]
root = ET.Element("testsuites")
for f in sorted(glob.glob(f"{work}/suite-*.xml")):
    try:
        tree = ET.parse(f).getroot()
    except ET.ParseError as e:
        print("unreadable junit file", f, e)
        continue
    for s in (tree.iter("testsuite") if tree.tag == "testsuites" else [tree]):
        root.append(s)
tot = {k: sum(int(s.get(k, 0)) for s in root) for k in ("tests", "failures", "errors",
                                                         "skipped")}
for k, v in tot.items():
    root.set(k, str(v))
ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
print("suite.xml:", tot)
EOF
note "suite totals: $(grep -m1 '^suite.xml:' "$LOG" || echo 'none'); not reached: ${NOT_REACHED:-none}"

# --------------------------------------------------------------------------- 5. benchmarks
: > "$OUT/bench.txt"
for c in overhead resnet50 resnet50_amp encoder resnet50_bf16 resnet50_o2; do
    run "benchmark $c (bench.txt)" 120 "$PY" benchmarks/gpu.py --cases "$c" --steps 5 \
        --warmup 2 >> /dev/null
    # the benchmark's table went to log.txt: copy this case's part to bench.txt
    "$PY" - "$LOG" "$c" >> "$OUT/bench.txt" <<'EOF'
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
head = f"===== benchmark {sys.argv[2]} "
print(f"===== {sys.argv[2]}")
if head in text:
    print("\n".join(text.rsplit(head, 1)[-1].splitlines()[1:]).strip())
else:
    print("not run (the time budget is spent)")
EOF
    [ "$GPU_OK" = 1 ] || { note "benchmarks: the rest not run (no GPU)"; break; }
done

note "done in $(($(date +%s) - START))s; files: $(cd "$OUT" && ls | tr '\n' ' ')"
