#!/usr/bin/env bash
# Issue 9's remaining device work (second session), one call per machine kind, run from the repository root:
#   bash suite/steady_session.sh ncu    (nvidia-h200)    replay passes per request variant (bench/ncu_passes.py),
#                                       then live `ask` with the targeted request (transcripts) and the same ask
#                                       with --set full (bench/ask_time.py)
#   bash suite/steady_session.sh nccl   (nvidia-h200-x2) capture suite/nccl.toml (nsys of both ranks + Kineto per rank)
# Needs .debs (libdw1, libelf1 for nsys's importer) and .whl (pydantic & co., ncu-report) carried along.
# Results land in $OUT (the device tool's output folder) or /tmp/device-out.
set -uo pipefail
START=$(date +%s)
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - START) )); }
R=${OUT:-/tmp/device-out}; mkdir -p "$R"; unset OUT
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/dw && for f in .debs/*.deb; do dpkg -x "$f" /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src
mkdir -p /tmp/kpbin && printf '#!/bin/sh\nexec python3 -m kernel_profiler.cli "$@"\n' > /tmp/kpbin/kernel-profiler
chmod +x /tmp/kpbin/kernel-profiler && export PATH=/tmp/kpbin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader
case "${1:-}" in
  ncu)
    L=/tmp/live B=/tmp/bench A=/tmp/ask; mkdir -p $L $B $A
    nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -o $L/pageable_upload suite/onetime/pageable_upload.cu &
    nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -o $L/launch_once suite/onetime/launch_once.cu &
    wait
    {
      timeout 90 python3 bench/ncu_passes.py --label column_sum_scale --regex column_sum_scale --skip 2 --out $B \
        -- $L/pageable_upload
      timeout 90 python3 bench/ncu_passes.py --label transpose_once --regex transpose_once --skip 0 --out $B \
        -- $L/launch_once
      DTYPE=bf16 timeout 120 python3 bench/ncu_passes.py --label gemm_bf16 --regex 'nvjet|gemm|xmma|cutlass|sm90' \
        --skip 3 --out $B --only targeted,targeted+SourceCounters,targeted+inst_executed,metrics+LaunchStats,full \
        -- python3 suite/onetime/cublas_gemm.py
      timeout 120 python3 bench/ncu_passes.py --label gather_transpose --regex gather_transpose --skip 3 --out $B \
        --only targeted,targeted+SourceCounters,metrics+LaunchStats,full -- python3 suite/onetime/triton_jit.py
    } 2>&1 | tee "$R/ncu_passes.jsonl"
    echo "=== passes done at $(( $(date +%s) - START ))s"
    # live asks with the targeted request (transcripts), then the --set full baseline, while time is left
    ask() {  # ask LABEL REQUESTS CMD...
      local label=$1 req=$2; shift 2
      [ "$(left)" -gt 40 ] || { echo "skip $label $req: $(left)s left"; return; }
      timeout $(( $(left) < 150 ? $(left) : 150 )) python3 bench/ask_time.py --label "$label" --requests "$req" \
        --out $A -- "$@"
    }
    {
      ask ot-pageable-upload targeted $L/pageable_upload
      ask ot-launch-once targeted $L/launch_once
      ask ot-triton-jit targeted python3 suite/onetime/triton_jit.py
      DTYPE=fp32 ask ot-gemm-fp32 targeted python3 suite/onetime/cublas_gemm.py
      ask ot-eager-lazy targeted python3 suite/onetime/eager_lazy.py
      ask ot-pageable-upload full $L/pageable_upload
      ask ot-triton-jit full python3 suite/onetime/triton_jit.py
      DTYPE=fp32 ask ot-gemm-fp32 full python3 suite/onetime/cublas_gemm.py
      ask ot-launch-once full $L/launch_once
    } 2>&1 | tee "$R/ask_time.jsonl"
    tar -C $A -cJf "$R/ask.tar.xz" . 2>/dev/null   # transcripts (*-targeted.jsonl are the live ones) and logs
    tar -C $B -cJf "$R/ncu_passes_logs.tar.xz" --exclude='*.ncu-rep' . 2>/dev/null
    ;;
  nccl)
    nvidia-smi -L
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    timeout 300 python3 suite/capture_nccl.py --work /tmp/nc --pack-dir "$R" 2>&1 | tee "$R/nccl.log"
    # a real report of the default (targeted) request, without source counters, for the SASS-walk test
    L=/tmp/live; mkdir -p $L
    nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -o $L/pageable_upload suite/onetime/pageable_upload.cu
    python3 -c "import sys; sys.path.insert(0, 'src'); from kernel_profiler.agent.ncu_metrics import targeted_args; print(' '.join(targeted_args()))" > /tmp/req
    timeout 60 ncu --clock-control none -k regex:column_sum_scale -s 2 -c 1 -f -o "$R/ncu_targeted" $(cat /tmp/req) \
      $L/pageable_upload 2>&1 | grep -E "PROF|pass" | tee -a "$R/nccl.log"
    # live ask on the two-rank program (offline expert), while time is left
    [ "$(left)" -gt 100 ] && { echo "### kernel-profiler ask -- torchrun nccl_stretch.py"
      timeout $(( $(left) - 20 )) kernel-profiler ask "why is this program slow?" --model expert \
        --record "$R/live-h200x2-ot-nccl-stretch.jsonl" -- python3 -m torch.distributed.run --nproc_per_node=2 \
        --master_port=29541 suite/onetime/nccl_stretch.py; echo "rc=$?"; } > "$R/live_nccl.log" 2>&1
    tail -40 "$R/live_nccl.log"
    ;;
  nccl_live)
    # live ask on the two-rank program (offline expert); its ncu report of the GEMM joins the capture
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    export TMPDIR=/tmp/askrun; mkdir -p $TMPDIR
    { echo "### kernel-profiler ask -- torchrun nccl_stretch.py"; t0=$(date +%s)
      timeout 300 kernel-profiler ask "why is this program slow?" --model expert \
        --record "$R/live-h200x2-ot-nccl-stretch.jsonl" -- python3 -m torch.distributed.run --nproc_per_node=2 \
        --master_port=29541 suite/onetime/nccl_stretch.py; echo "rc=$? wall=$(( $(date +%s) - t0 ))s"; } > "$R/live_nccl.log" 2>&1
    cp $(ls -t $TMPDIR/kp-run-*/*ncu/profile.ncu-rep 2>/dev/null | head -1) "$R/ncu.ncu-rep" 2>/dev/null
    tail -45 "$R/live_nccl.log"
    ;;
  *) echo "usage: $0 ncu|nccl|nccl_live" >&2; exit 2 ;;
esac
echo "=== done at $(( $(date +%s) - START ))s"
ls -la "$R"
