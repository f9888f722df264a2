#!/usr/bin/env bash
# Capture suite/holdout7.toml on the lent H200 (blind set 8), run from the repository root, one call per half:
#   bash suite/holdout7_session.sh cuda     the CUDA C++ cases: nvcc -Xptxas -v, SASS, nsys sqlite, ncu --set full
#   bash suite/holdout7_session.sh python   the PyTorch cases: Kineto trace, nsys sqlite, ncu of the named kernel
# (suite/capture.py does the work; each half packs its captures as LABEL.tar.xz.partNN into $OUT.)
# Unpack here with: cat LABEL.tar.xz.part* | tar -xJ -C /tmp/h7 && python3 suite/pack_testdata.py /tmp/h7/captures tests/data/captures
# Needs .debs (libdw1, libelf1 for nsys's importer) carried along. The suite folder may be a carried copy:
# everything is found relative to this script.
set -uo pipefail
S=$(cd "$(dirname "$0")" && pwd)
R=${OUT:-/tmp/device-out}; mkdir -p "$R"; unset OUT
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/dw && for f in .debs/*.deb; do dpkg -x "$f" /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader
case "${1:-}" in
  cuda)   lang=cuda;   deadline=${DEADLINE:-240} ;;
  python) lang=python; deadline=${DEADLINE:-300} ;;
  *) echo "usage: $0 cuda|python" >&2; exit 2 ;;
esac
timeout $(( deadline + 150 )) python3 "$S/capture.py" --cases "$S/holdout7.toml" --lang $lang --work /tmp/h7$lang \
  --pack-dir "$R" --label h7$lang --deadline $deadline 2>&1 | tee "$R/h7$lang.log"
grep -h "median step\|mean step" /tmp/h7$lang/captures/*/run.log 2>/dev/null | sort | uniq | tee -a "$R/h7$lang.log"
ls -la "$R"
