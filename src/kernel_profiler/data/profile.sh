#!/usr/bin/env bash
# kernel-profiler profile MODE ... (this script; also tools/profile.sh in a clone) — capture one level of
# evidence for kernel-profiler, then analyze it.
#   kernel-profiler profile nsys CMD...               timeline (Nsight Systems) -> OUT/nsys.sqlite
#   KERNEL=regex kernel-profiler profile ncu CMD...   one kernel deep (Nsight Compute) -> OUT/ncu.ncu-rep
#   kernel-profiler profile sass BINARY_OR_CUBIN|DIR  SASS + resource usage (cuobjdump) -> OUT/sass.txt
#   kernel-profiler profile telemetry CMD...          NVML clocks/throttle/power while CMD runs -> OUT/telemetry.json
# Environment: KERNEL (ncu kernel-name regex, required for ncu), SKIP (launches to skip, default 3),
# COUNT (launches to profile, default 1), SECTIONS (space-separated ncu section ids; default: --set full),
# OUT (output folder, default ./kp-artifacts/<mode>-<time>), TIMEOUT (seconds, default 600).
# Rules (the same as the Python tools' sandbox): the command is run as an argv list, never through a
# shell; only nsys, ncu, cuobjdump and kernel-profiler are invoked; outputs go to a fresh folder and
# nothing existing is overwritten.
set -uo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "profile.sh: $*" >&2; exit 2; }

[ $# -ge 1 ] || { usage; exit 2; }
case "$1" in -h|--help|help) usage; exit 0 ;; esac
mode=$1; shift
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || die "$mode needs a command or file after it (see --help)"

OUT=${OUT:-./kp-artifacts/$mode-$(date +%Y%m%d-%H%M%S)}
[ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ] && die "$OUT exists and is not empty; set OUT to a new folder"
TIMEOUT=${TIMEOUT:-600}
# The output folder is created only once the mode's own checks passed: a refused call leaves nothing behind.
mkout() { mkdir -p "$OUT" || die "cannot create $OUT"; }

find_nsys() {
  command -v nsys 2>/dev/null && return
  for p in /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
           /usr/local/cuda/bin/nsys; do
    [ -x "$p" ] && { echo "$p"; return; }
  done
}

analyze() {
  if command -v kernel-profiler >/dev/null; then
    kernel-profiler analyze "$@"
  else
    echo "profile.sh: kernel-profiler is not installed; artifacts are in $OUT" >&2
  fi
}

case "$mode" in
  nsys)
    NSYS=$(find_nsys)
    [ -n "$NSYS" ] || die "nsys not found on PATH or in the Nsight Compute/CUDA folders; install Nsight Systems"
    mkout
    timeout "$TIMEOUT" "$NSYS" profile -t cuda,nvtx --sample=none --cpuctxsw=none -o "$OUT/nsys" \
      --force-overwrite true "$@" > "$OUT/profile.log" 2>&1
    rc=$?
    if [ ! -f "$OUT/nsys.nsys-rep" ]; then
      if grep -q "libdw" "$OUT/profile.log"; then
        die "nsys left no report: its importer needs libdw.so.1 (apt-get install libdw1, or unpack the .deb and add it to LD_LIBRARY_PATH)"
      fi
      die "nsys left no report (exit $rc); see $OUT/profile.log"
    fi
    "$NSYS" export --type sqlite --force-overwrite true -o "$OUT/nsys.sqlite" "$OUT/nsys.nsys-rep" >> "$OUT/profile.log" 2>&1 \
      || die "nsys export failed; see $OUT/profile.log"
    [ $rc -eq 0 ] || echo "profile.sh: the target exited with $rc (timeline kept)" >&2
    analyze "$OUT/nsys.sqlite"
    ;;
  ncu)
    command -v ncu >/dev/null || die "ncu not found; install Nsight Compute (it ships with the CUDA toolkit)"
    [ -n "${KERNEL:-}" ] || die "set KERNEL to a regex of the kernel to profile (the timeline names the dominant one)"
    mkout
    if [ -n "${SECTIONS:-}" ]; then sec=(); for s in $SECTIONS; do sec+=(--section "$s"); done; else sec=(--set full); fi
    timeout "$TIMEOUT" ncu "${sec[@]}" --clock-control none --target-processes all -k "regex:$KERNEL" \
      -s "${SKIP:-3}" -c "${COUNT:-1}" -o "$OUT/ncu" "$@" > "$OUT/profile.log" 2>&1
    rc=$?
    if grep -q ERR_NVGPUCTRPERM "$OUT/profile.log"; then
      die "ncu cannot read GPU performance counters (ERR_NVGPUCTRPERM): run as root or with CAP_SYS_ADMIN (--cap-add SYS_ADMIN in containers), or load the driver with NVreg_RestrictProfilingToAdminUsers=0"
    fi
    [ -f "$OUT/ncu.ncu-rep" ] || die "ncu profiled nothing (exit $rc; is KERNEL=$KERNEL right, SKIP too large?); see $OUT/profile.log"
    analyze "$OUT/ncu.ncu-rep"
    ;;
  sass)
    command -v cuobjdump >/dev/null || die "cuobjdump not found; it ships with the CUDA toolkit (or pip install nvidia-cuda-cuobjdump)"
    target=$1
    [ -e "$target" ] || die "$target: no such file"
    mkout
    if [ -d "$target" ]; then  # e.g. a Triton cache folder
      : > "$OUT/sass.txt"
      find "$target" -name '*.cubin' -print0 | while IFS= read -r -d '' c; do
        cuobjdump --dump-sass "$c" >> "$OUT/sass.txt"; cuobjdump -res-usage "$c" >> "$OUT/res_usage.txt"
      done
    else
      cuobjdump --dump-sass "$target" > "$OUT/sass.txt" || die "cuobjdump could not read $target"
      cuobjdump -res-usage "$target" > "$OUT/res_usage.txt" 2>&1
    fi
    [ -s "$OUT/sass.txt" ] || die "no SASS found in $target"
    echo "SASS in $OUT/sass.txt, resource usage in $OUT/res_usage.txt"
    grep -oE '^\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P[0-9T]\s+)?[A-Z0-9]+' "$OUT/sass.txt" | awk '{print $NF}' | sort | uniq -c | sort -rn | head -15
    ;;
  telemetry)
    command -v kernel-profiler >/dev/null || die "kernel-profiler is not installed (pip install kernel-profiler)"
    mkout
    kernel-profiler telemetry --out "$OUT/telemetry.json" -- "$@"
    ;;
  *) usage; exit 2 ;;
esac
