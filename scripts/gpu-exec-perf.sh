#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where the executor's time goes on a GPU machine: builds like scripts/gpu-check.sh (BUILD_ONLY=1),
# captures tangle N=200 at batch 1 (Torch IR), times bench_exec on CPU and CUDA, and, when `perf`
# is installed, prints the hottest symbols of a CUDA run.
#
#   scripts/gpu-exec-perf.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/fxlens-gpu-perf}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
BUILD_ONLY=1 bash scripts/gpu-check.sh "$OUT" > "$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
set +e  # diagnostics from here on: report what can be reported
export LD_LIBRARY_PATH="$PWD/.deps/root/lib/x86_64-linux-gnu:$PWD/.deps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export PYTHONPATH=$PWD/python:${PYTHONPATH:-}
G="$OUT/t200_torch_b1.json"
$PY - "$G" <<'PY' 2>&1 | { grep -v -i warn | grep -v "return cls" || true; }
import sys
from fxlens.examples import _dynamo
from fxlens.models import Tangle, tangle_inputs
_dynamo(Tangle(200).eval(), tangle_inputs(200, batch=1), sys.argv[1], "tangle")
PY
for dev in cpu cuda cuda; do build-gpu/bench/bench_exec "$G" 200 $dev; done
if command -v perf >/dev/null; then
  perf record -g -o "$OUT/perf.data" build-gpu/bench/bench_exec "$G" 1000 cuda > /dev/null 2>&1
  perf report -i "$OUT/perf.data" --no-children --sort dso -g none 2>/dev/null | grep -v "^#" | head -15
  perf report -i "$OUT/perf.data" --no-children --sort sym -g none 2>/dev/null | grep -v "^#" | head -60 | cut -c1-180
  perf report -i "$OUT/perf.data" --children --sort sym -g none 2>/dev/null | grep -v "^#" | head -60 | cut -c1-180
else
  echo "no perf on this machine"; ls /usr/local/cuda/bin | tr '\n' ' '
fi
# Host time per iteration under the profiler: wall, inside outermost ATen ops, inside CUDA runtime calls.
build-gpu/app/fxlens-cli profile "$G" --device cuda --iters 20 --warmup 3 --host-ops --raw-events "$OUT/raw.json" > /dev/null
$PY - "$OUT/raw.json" <<'PY'
import json, statistics, sys
ev = json.load(open(sys.argv[1]))["events"]
iters = sorted((e[2], e[3]) for e in ev if e[0] == "iter_range")
def outer(spans):
    tot, end = 0, -1
    for s, e in sorted(spans, key=lambda x: (x[0], -x[1])):
        if s < end:
            continue
        tot += e - s; end = e
    return tot
rows = []
for s, t in iters:
    ops = [(e[2], e[3]) for e in ev if e[0] == "cpu_op" and e[2] >= s and e[3] <= t]
    rt = [(e[2], e[3]) for e in ev if e[0] == "launch" and e[2] >= s and e[3] <= t]
    rows.append(((t - s) / 1e6, outer(ops) / 1e6, outer(rt) / 1e6, len(rt)))
print("profiled iteration (median): wall %.2f ms, in ATen ops %.2f ms, in CUDA runtime calls %.2f ms (%d calls)" %
      tuple(statistics.median(r[i] for r in rows) for i in range(4)))
PY
