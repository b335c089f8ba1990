#!/usr/bin/env bash
# Time `make demo` as a new user meets it: a clean clone, no .venv, no converted
# weights, no request cache. pip's own cache is left as it is (run the script twice
# to measure with a warm cache, the figure docs/benchmarks/install.md quotes).
#
#   tools/bench/install.sh [REV]     # REV defaults to HEAD of this repository
#
# C and C++ compilers are hidden (CC, CXX and friends point at `false`), so the
# measurement fails if anything on the default path needs a compiler.
# Prints one line per step of `make demo`, then the wall-clock time. KEEP=1 keeps
# the temporary clone for inspection.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
rev="${1:-HEAD}"
work="$(mktemp -d "${TMPDIR:-/tmp}/holistic-bench-install.XXXXXX")"
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "kept: $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

git clone -q "$repo" "$work/holistic"
git -C "$work/holistic" checkout -q "$rev"
echo "clean clone of $(git -C "$work/holistic" rev-parse --short HEAD) in $work/holistic"

export HOLISTIC_CACHE_DIR="$work/cache"   # no converted weights, no hashes
export CC=false CXX=false CMAKE_C_COMPILER=false CMAKE_CXX_COMPILER=false
unset VIRTUAL_ENV PYTHONPATH
load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

# CPU time as well as wall time: on a shared machine the wall clock also measures the neighbours.
timer=()
if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f "%U %S" -o "$work/cpu"); fi
start=$(date +%s)
if ! (cd "$work/holistic" && "${timer[@]}" make demo) >"$work/make_demo.log" 2>&1; then
  KEEP=1
  echo "make demo failed; log: $work/make_demo.log" >&2
  tail -n 30 "$work/make_demo.log" >&2
  exit 1
fi
end=$(date +%s)
install_lines=$(sed -n '/^\[4\/4\]/q;p' "$work/make_demo.log" | wc -l)
grep -E '^\[[0-9]/4\]|^summarized|^site:' "$work/make_demo.log" | sed "s|$work|<tmp>|" || true
echo "install output: $install_lines lines before the last install step (KEEP=1 keeps the log)"
secs=$((end - start))
printf 'make demo from a clean clone: %dm %02ds (%d s) on %s CPU cores, load average before: %s\n' \
  $((secs / 60)) $((secs % 60)) "$secs" "$(nproc)" "$load"
if [ -s "$work/cpu" ]; then
  awk '{printf "CPU time of make demo and its children: %.0f s user + %.0f s system\n", $1, $2}' "$work/cpu"
fi
