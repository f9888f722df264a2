#!/usr/bin/env bash
# Capture one holdout campaign on the lent H200, run from the repository root, one call per half:
#   bash suite/holdout_session.sh N cuda     suite/holdoutN.toml's CUDA C++ cases: nvcc -Xptxas -v, SASS, nsys sqlite,
#                                            ncu --set full
#   bash suite/holdout_session.sh N python   its PyTorch cases: Kineto trace, nsys sqlite, ncu of the named kernel
# CUDA_DEADLINE / PYTHON_DEADLINE (seconds for capture.py; DEADLINE overrides both) default to 300 / 380; the
# holdoutN_session.sh wrappers keep the values each campaign ran with.
# (suite/capture.py does the work; each half packs its captures as hN<lang>.tar.xz.partNN into $OUT.)
# Unpack here with: cat hN*.tar.xz.part* | tar -xJ -C /tmp/hN && python3 suite/pack_testdata.py /tmp/hN/captures tests/data/captures
# Needs .debs (libdw1, libelf1 for nsys's importer) carried along. The suite folder may be a carried copy:
# everything is found relative to this script.
set -uo pipefail
S=$(cd "$(dirname "$0")" && pwd)
n=${1:-}
[ -f "$S/holdout$n.toml" ] || { echo "usage: $0 N cuda|python (suite/holdoutN.toml)" >&2; exit 2; }
case "${2:-}" in
  cuda)   lang=cuda;   deadline=${DEADLINE:-${CUDA_DEADLINE:-300}} ;;
  python) lang=python; deadline=${DEADLINE:-${PYTHON_DEADLINE:-380}} ;;
  *) echo "usage: $0 N cuda|python" >&2; exit 2 ;;
esac
R=${OUT:-/tmp/device-out}; mkdir -p "$R"; unset OUT
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/dw && for f in .debs/*.deb; do dpkg -x "$f" /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader
label=h$n$lang
timeout $(( deadline + 150 )) python3 "$S/capture.py" --cases "$S/holdout$n.toml" --lang $lang --work /tmp/$label \
  --pack-dir "$R" --label $label --deadline $deadline 2>&1 | tee "$R/$label.log"
grep -h "median step\|mean step" /tmp/$label/captures/*/run.log 2>/dev/null | sort | uniq | tee -a "$R/$label.log"
ls -la "$R"
