#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU profiling numbers for docs/BENCHMARKS.md: tangle N=200 and N=800 (Torch and ATen IR), original
# vs the `all`-optimized version, through `fxlens-cli profile` (eager, and with frozen weights); then
# the time to profile one 20k-node version. Builds like scripts/gpu-check.sh (core + CLI + executor
# against the machine's own PyTorch, no Qt, no Graphviz).
#
#   scripts/gpu-profile.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/fxlens-gpu-profile}
mkdir -p "$OUT"
BUILD_ONLY=1 scripts/gpu-check.sh "$OUT"
CLI=build-gpu/app/fxlens-cli
if [ -d .deps/root/usr ]; then
  export LD_LIBRARY_PATH="$PWD/.deps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for g in tangle200_torch tangle200_aten tangle800_torch tangle800_aten; do
  for mode in eager freeze; do
    flag=(); [ $mode = freeze ] && flag=(--freeze)
    echo "== $g, $mode: original vs all-optimized (10 iterations after 3 warm-up)"
    start=$(date +%s%N)
    $CLI profile resources/examples/$g.json.gz --optimize --iters 10 --warmup 3 --device cuda "${flag[@]}" \
      -o "$OUT/$g.$mode.prof.json" --compare-output "$OUT/$g.$mode.opt.prof.json" | tail -9
    echo "profile command (both versions + optimize): $(ms $start) ms"
  done
done
for g in tangle800_torch tangle800_aten; do
  echo "== profiling overhead: $g original alone ($($CLI info resources/examples/$g.json.gz | grep '^nodes'))"
  start=$(date +%s%N)
  $CLI profile resources/examples/$g.json.gz --iters 10 --warmup 3 --device cuda --trace "$OUT/$g.trace.json" > /dev/null
  echo "warm-up 3 + 10 profiled iterations + trace: $(ms $start) ms (whole process: load, inputs, CUDA init)"
done
