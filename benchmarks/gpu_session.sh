#!/usr/bin/env bash
# The GPU checks and figures of issues 45 and 58 in two runs of under 9 and 8 minutes (one command
# on the device may take 10), from the repository root of a machine with one CUDA device and CuPy:
#
#   bash benchmarks/gpu_session.sh checks        the tests, the agreement and the SMO speed
#   bash benchmarks/gpu_session.sh peers         the peers, KernelRidge, the memory cap and a
#                                                precomputed kernel
#   bash benchmarks/gpu_session.sh --stage DIR   before the working tree is sent: copy the real
#                                                data sets from DIR into shared/data
#
# 'checks', with each part's limit in seconds (520 in all): tests/test_gpu.py,
# tests/test_device_kernels.py (precomputed and callable kernels on the device against the CPU)
# and tests/test_device_cascade.py (the cascade's workers on the GPU) (220), check_gpu.py (40), and bench_gpu.py's binary and 10-class 60,000 × 784 fits, each as by
# default, with the class pairs in turn and the solver's parts timed ('streams=1 profile=1'), and
# with blocks of 512 threads (260). 'peers' (450 in all):
# a9a and w8a against scikit-learn (135), cuML's SVC on binary and a9a where cuml is installed (120),
# KernelRidge on 20,000 rows, GPU against CPU (35),
# an SVC fit whose data is larger than CuPy's pool limit (70), and an SVC fit on a precomputed
# 20,000 × 20,000 kernel placed on the device against the same fit from the data (90). The real
# data sets (a9a, a9a.t, w8a, satimage, mnist.scale.t, heart_scale) are read from $SVMKIT_DATA,
# shared/data or ../shared/data; a part whose file is missing says so. Each part's whole output
# goes to $OUT/<part>.log (or /tmp/gpu_session when $OUT is not set); the last lines of each are
# printed.
set -u
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--stage" ]; then
    mkdir -p shared/data
    for f in a9a a9a.t w8a satimage.scale satimage.scale.t mnist.scale.t.bz2 heart_scale; do
        cp "$2/$f" shared/data/ || echo "not staged: $2/$f"
    done
    ls -l shared/data
    exit 0
fi

if [ "${1:-}" != checks ] && [ "${1:-}" != peers ]; then
    echo "usage: bash benchmarks/gpu_session.sh checks|peers|--stage DIR" >&2
    exit 2
fi

export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
LOGS="${OUT:-/tmp/gpu_session}"
mkdir -p "$LOGS"
START=$SECONDS

part() {  # part NAME LIMIT LINES COMMAND...: run COMMAND under LIMIT seconds, print its last LINES lines
    local name=$1 limit=$2 lines=$3
    shift 3
    local t0=$SECONDS
    timeout -k 2 "$limit" "$@" > "$LOGS/$name.log" 2>&1
    local rc=$?
    local state="exit $rc"
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && state="STOPPED at its ${limit} s limit"
    echo
    echo "=== $name: $state after $((SECONDS - t0)) s (session $((SECONDS - START)) s) ==="
    tail -n "$lines" "$LOGS/$name.log"
}

echo "=== machine ==="
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -2
python -c "import sys, numpy, cupy, sklearn; print('python', sys.version.split()[0], 'numpy', numpy.__version__, \
'cupy', cupy.__version__, 'scikit-learn', sklearn.__version__)" 2>&1 | tail -1
ls shared/data 2>/dev/null | tr '\n' ' '; echo

case "${1:-}" in
checks)
    part test_gpu 220 6 python -m pytest -vv -p no:cacheprovider -p no:warnings tests/test_gpu.py \
        tests/test_device_kernels.py tests/test_device_cascade.py
    # the tests that need the GPU, each with its outcome (-vv: the project's addopts hold -q)
    sed -nE 's/.*::(test_gpu_[^ ]*) (PASSED|FAILED|SKIPPED|ERROR).*/\2 \1/p' "$LOGS/test_gpu.log"
    part check_gpu 40 12 python benchmarks/check_gpu.py --sets heart_scale,a9a,w8a,satimage,mnist
    part bench_synthetic 260 12 python benchmarks/bench_gpu.py --sets binary,mnist10 \
        --systems "svmkit cuda,svmkit cuda streams=1 profile=1,svmkit cuda threads=512" --timeout 45
    ;;
peers)
    part bench_a9a_w8a 135 8 python benchmarks/bench_gpu.py --sets a9a,w8a --systems "svmkit cuda,scikit-learn" \
        --timeout 62 --no-floor
    if python -c "import cuml" 2>/dev/null; then
        part bench_cuml 120 8 python benchmarks/bench_gpu.py --sets binary,a9a --systems "svmkit cuda,cuml" \
            --timeout 50 --no-floor
    else
        echo "=== bench_cuml: cuml is not installed here ==="
    fi
    part bench_ridge20k 35 4 python benchmarks/bench_gpu.py --sets ridge20k --timeout 30 --no-floor
    part bench_capped 70 4 python benchmarks/bench_gpu.py --sets capped --timeout 65 --no-floor
    part bench_precomputed 90 4 python benchmarks/bench_gpu.py --sets precomputed --timeout 85 --no-floor
    ;;
esac
echo
echo "=== done in $((SECONDS - START)) s; logs in $LOGS ==="
