#!/usr/bin/env bash
# The GPU checks and figures of issues 45, 57 and 58, from the repository root of a machine with
# one CUDA device and CuPy, in four groups, each one call of under 200 s:
#
#   bash benchmarks/gpu_session.sh tests     tests/test_gpu.py, tests/test_device_kernels.py
#                                            (precomputed and callable kernels on the device
#                                            against the CPU) and tests/test_device_cascade.py
#                                            (the cascade's workers on the GPU), on 4 processes
#   bash benchmarks/gpu_session.sh speed     bench_gpu.py's binary and 10-class 60,000 × 784 fits,
#                                            as by default and with the class pairs in turn and
#                                            the solver's parts timed ('streams=1 profile=1')
#   bash benchmarks/gpu_session.sh peers     a9a and w8a against scikit-learn; an SVC fit whose
#                                            data is larger than CuPy's pool limit
#   bash benchmarks/gpu_session.sh more      bench_cluster.py's noisy 1M × 50 set fitted in memory;
#                                            cuML's SVC beside svmkit's where cuml is installed
#   bash benchmarks/gpu_session.sh --stage DIR   before the working tree is sent: copy the real
#                                            data sets from DIR into shared/data
#
# A device session has 15 minutes in all. Run the groups as calls one after another while the
# machine stays warm, most needed first: a call whose command runs to its limit brings nothing
# back, so no group may outlast its call. Each part is stopped at its own limit and at the
# group's deadline ($DEADLINE seconds after the group starts, 190 unless set), whichever comes
# first. The real data sets (a9a, w8a) are read from $SVMKIT_DATA, shared/data or
# ../shared/data; a part whose file is missing says so. svmkit is the one Python imports, else
# src/ (whose compiled core must then be built in place). Each part's whole output goes to
# $OUT/<part>.log (or /tmp/gpu_session when $OUT is not set); the last lines of each are printed.
set -u
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--stage" ]; then
    mkdir -p shared/data
    for f in a9a w8a; do
        cp "$2/$f" shared/data/ || echo "not staged: $2/$f"
    done
    ls -l shared/data
    exit 0
fi

case "${1:-}" in
tests|speed|peers|more) ;;
*) echo "usage: bash benchmarks/gpu_session.sh tests|speed|peers|more|--stage DIR" >&2; exit 2 ;;
esac

python -c "import svmkit._core" 2>/dev/null || export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
LOGS="${OUT:-/tmp/gpu_session}"
mkdir -p "$LOGS"
START=$SECONDS
DEADLINE=${DEADLINE:-190}

part() {  # part NAME LIMIT LINES COMMAND...: run COMMAND under LIMIT seconds (and the deadline), print its last LINES lines
    local name=$1 limit=$2 lines=$3
    shift 3
    local left=$((DEADLINE - (SECONDS - START) - 5))
    if [ "$left" -lt 10 ]; then
        echo; echo "=== $name: not run, the group's deadline is near ==="; return
    fi
    [ "$limit" -gt "$left" ] && limit=$left
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

case "$1" in
tests)
    part test_gpu 180 6 python -m pytest -vv -n 4 -p no:cacheprovider -p no:warnings tests/test_gpu.py \
        tests/test_device_kernels.py tests/test_device_cascade.py
    # the tests that did not pass, and how many that need the GPU passed (-vv: the project's addopts hold -q)
    grep -E "^(\[gw[0-9]+\] )?(\[ *[0-9]+%\] )?(FAILED|ERROR) " "$LOGS/test_gpu.log" | head -20
    echo "passed on the GPU: $(grep -cE "PASSED .*::test_gpu_" "$LOGS/test_gpu.log") tests named test_gpu_*"
    ;;
speed)
    part bench_synthetic 180 12 python benchmarks/bench_gpu.py --sets binary,mnist10 \
        --systems "svmkit cuda,svmkit cuda streams=1 profile=1" --timeout 40
    ;;
peers)
    part bench_a9a_w8a 125 8 python benchmarks/bench_gpu.py --sets a9a,w8a --systems "svmkit cuda,scikit-learn" \
        --timeout 58 --no-floor
    part bench_capped 60 4 python benchmarks/bench_gpu.py --sets capped --timeout 55 --no-floor
    ;;
more)
    part bench_noisy1m 120 4 python benchmarks/bench_gpu.py --sets noisy1m --timeout 115 --no-floor
    if python -c "import cuml" 2>/dev/null; then
        part bench_cuml 60 8 python benchmarks/bench_gpu.py --sets binary --systems "svmkit cuda,cuml" \
            --timeout 55 --no-floor
    else
        echo "=== bench_cuml: cuml is not installed here ==="
    fi
    ;;
esac
echo
echo "=== done in $((SECONDS - START)) s; logs in $LOGS ==="
