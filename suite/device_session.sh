#!/usr/bin/env bash
# One device session's work beyond the single-GPU suite, run from the repository root on the lent machine:
#   bash suite/device_session.sh multirank   two-GPU straggler suite (needs 2 GPUs)
#   bash suite/device_session.sh profile_sh  the subagent's method followed literally with tools/profile.sh
# Results land in $OUT (the device tool's output folder) or /tmp/device-out.
set -uo pipefail
R=${OUT:-/tmp/device-out}; mkdir -p "$R"; unset OUT
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p /tmp/dw && for f in .debs/*.deb; do dpkg -x "$f" /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD/src
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p /tmp/kpbin && printf '#!/bin/sh\nexec python3 -m kernel_profiler.cli "$@"\n' > /tmp/kpbin/kernel-profiler
chmod +x /tmp/kpbin/kernel-profiler && export PATH=/tmp/kpbin:$PATH
for step in "$@"; do
  case "$step" in
    multirank)
      nvidia-smi -L
      python3 suite/capture_multirank.py --work /tmp/mr --pack-dir "$R" 2>&1 | tee "$R/multirank.log" | tail -8 ;;
    profile_sh)
      L="$R/profile_sh.log"; W=/tmp/kp; mkdir -p $W
      nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -o $W/transpose suite/cases/transpose.cu
      { echo "### step 1: tools/profile.sh nsys $W/transpose"; OUT=$W/t1 tools/profile.sh nsys $W/transpose
        echo "### step 2: KERNEL=transpose_tile tools/profile.sh ncu $W/transpose"
        KERNEL=transpose_tile OUT=$W/t2 tools/profile.sh ncu $W/transpose
        echo "### step 3: tools/profile.sh sass $W/transpose"; OUT=$W/t3 tools/profile.sh sass $W/transpose
        echo "### answer and critique"; kernel-profiler analyze $W/t1 $W/t2 $W/t3 --format md > $W/answer.md
        cat $W/answer.md; kernel-profiler critique $W/answer.md --artifacts $W/t1 $W/t2 $W/t3; echo "critique rc=$?"
        echo "### telemetry"; OUT=$W/t4 tools/profile.sh telemetry python3 suite/cases/py_gemm_bf16.py --steps 300
      } > "$L" 2>&1
      tar -C $W -cJf "$R/profile_sh.tar.xz" t1/nsys.sqlite t2/ncu.ncu-rep t3 t4 answer.md 2>/dev/null
      tail -30 "$L" ;;
    live_ask)
      W=/tmp/live; mkdir -p $W
      nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -o $W/softmax suite/cases/softmax.cu
      { echo "### kernel-profiler ask -- softmax (CUDA C++)"
        kernel-profiler ask "why is my softmax slow" --record "$R/live-h200-softmax.jsonl" -- $W/softmax; echo "rc=$?"
        echo "### kernel-profiler ask -- py_item_sync.py (PyTorch)"
        kernel-profiler ask "why is my training loop slow" --record "$R/live-h200-item-sync.jsonl" \
          -- python3 suite/cases/py_item_sync.py; echo "rc=$?"
      } > "$R/live_ask.log" 2>&1
      tail -40 "$R/live_ask.log" ;;
    live_torch)
      { echo "### ask -- python3 suite/cases/py_tiny_ops.py with nsys hidden (PyTorch-profiler fallback)"
        KERNEL_PROFILER_NSYS=none kernel-profiler ask "why is my optimizer step slow" \
          --record "$R/live-h200-torch-fallback.jsonl" -- python3 suite/cases/py_tiny_ops.py; echo "rc=$?"
      } > "$R/live_torch.log" 2>&1
      tail -30 "$R/live_torch.log" ;;
    live_torchrun)
      { echo "### ask -- torchrun --nproc_per_node=2 mr_train.py --case uneven"
        kernel-profiler ask "why is my training step slow" --record "$R/live-h200x2-torchrun-uneven.jsonl" \
          -- python3 -m torch.distributed.run --nproc_per_node=2 --master_port=29555 \
          suite/multirank/mr_train.py --case uneven --steps 20 --out /tmp/mrout; echo "rc=$?"
      } > "$R/live_torchrun.log" 2>&1
      tail -30 "$R/live_torchrun.log" ;;
    holdout)
      python3 suite/capture.py --cases suite/holdout.toml --work /tmp/ho --pack-dir "$R" --label holdout \
        --deadline 400 2>&1 | tee "$R/holdout.log" | tail -12 ;;
  esac
done
ls -la "$R"
