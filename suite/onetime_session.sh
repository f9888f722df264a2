#!/usr/bin/env bash
# Issue 9's device work, one call each, run from the repository root on the lent H200:
#   bash suite/onetime_session.sh capture   capture suite/onetime.toml (nsys + Kineto + ncu + SASS) and
#                                           measure ncu replay passes (bench/ncu_passes.py)
#   bash suite/onetime_session.sh live      live `kernel-profiler ask` on the one-time-work programs
# Needs .debs (libdw1, libelf1 for nsys's importer) and, for `live`, .whl (pydantic & co., ncu-report) carried along.
# Results land in $OUT (the device tool's output folder) or /tmp/device-out.
set -uo pipefail
R=${OUT:-/tmp/device-out}; mkdir -p "$R"; unset OUT
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/dw && for f in .debs/*.deb; do dpkg -x "$f" /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
# ncu_report comes from the carried ncu-report wheel: ncu's own extras/python copy segfaulted under python3.12 there
export PYTHONPATH=/tmp/site:$PWD/src
mkdir -p /tmp/kpbin && printf '#!/bin/sh\nexec python3 -m kernel_profiler.cli "$@"\n' > /tmp/kpbin/kernel-profiler
chmod +x /tmp/kpbin/kernel-profiler && export PATH=/tmp/kpbin:$PATH
W=/tmp/ot
case "${1:-}" in
  capture)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
    timeout 420 python3 suite/capture.py --cases suite/onetime.toml --work $W --pack-dir "$R" --label onetime \
      --deadline 330 2>&1 | tee "$R/onetime.log"
    B=/tmp/bench; mkdir -p $B
    {
      timeout 100 python3 bench/ncu_passes.py --label column_sum_scale --regex column_sum_scale --skip 2 --out $B \
        -- $W/bin/ot_cu_pageable_upload
      timeout 60 python3 bench/ncu_passes.py --label transpose_once --regex transpose_once --skip 0 --out $B \
        -- $W/bin/ot_cu_launch_once
      timeout 150 python3 bench/ncu_passes.py --label gather_transpose --regex gather_transpose --skip 3 --out $B \
        -- python3 suite/onetime/triton_jit.py
      DTYPE=bf16 timeout 120 python3 bench/ncu_passes.py --label gemm_bf16 --regex 'nvjet|gemm|xmma|cutlass|sm90' \
        --skip 3 --only sections7,sections11 --out $B -- python3 suite/onetime/cublas_gemm.py
    } 2>&1 | tee "$R/ncu_passes.jsonl"
    tar -C $B -cJf "$R/ncu_passes.tar.xz" . 2>/dev/null
    ;;
  live)
    L=/tmp/live; mkdir -p $L
    nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -o $L/pageable_upload suite/onetime/pageable_upload.cu
    nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -o $L/launch_once suite/onetime/launch_once.cu
    ask() {  # ask NAME CMD...
      local name=$1; shift
      echo "### kernel-profiler ask -- $*"
      local t0=$(date +%s)
      timeout 100 kernel-profiler ask "why is this program slow?" --model expert --record "$R/live-h200-$name.jsonl" -- "$@"
      echo "rc=$? wall=$(( $(date +%s) - t0 ))s"
    }
    {
      ask ot-pageable-upload $L/pageable_upload
      ask ot-launch-once $L/launch_once
      ask ot-triton-jit python3 suite/onetime/triton_jit.py
      DTYPE=fp32 ask ot-gemm-fp32 python3 suite/onetime/cublas_gemm.py
      ask ot-eager-lazy python3 suite/onetime/eager_lazy.py
    } > "$R/live.log" 2>&1
    grep -E "^###|^rc=" "$R/live.log"
    [ -n "${SKIP_BENCH:-}" ] && { ls -la "$R"; exit 0; }
    B=/tmp/bench; mkdir -p $B
    {
      timeout 60 python3 bench/ncu_passes.py --label column_sum_scale --regex column_sum_scale --skip 2 --out $B \
        --only targeted,metrics_only -- $L/pageable_upload
      timeout 60 python3 bench/ncu_passes.py --label transpose_once --regex transpose_once --skip 0 --out $B \
        --only targeted,metrics_only -- $L/launch_once
      DTYPE=bf16 timeout 90 python3 bench/ncu_passes.py --label gemm_bf16 --regex 'nvjet|gemm|xmma|cutlass|sm90' \
        --skip 3 --only targeted,metrics_only --out $B -- python3 suite/onetime/cublas_gemm.py
    } 2>&1 | tee "$R/ncu_passes_targeted.jsonl"
    tar -C $B -cJf "$R/ncu_passes_targeted.tar.xz" . 2>/dev/null
    grep -E "^###|^rc=|replay|launch_skip|Bottleneck|accepted|inconclusive" "$R/live.log" | head -80
    ;;
  *) echo "usage: $0 capture|live" >&2; exit 2 ;;
esac
ls -la "$R"
