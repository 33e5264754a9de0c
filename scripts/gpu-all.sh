#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Everything the docs report from the GPU machine, in one run with a log per phase (no Qt/Graphviz
# there; scripts/gpu-check.sh says which headers .deps/ carries):
#
#   scripts/gpu-all.sh OUT_DIR        (PHASES="checks ctr zoo" by default; TANGLE=50)
#
#   build   core + CLI + executor + fxlens._core for the machine's Python and PyTorch
#   ctr     bench/backend_vs_inductor.py on the CTR kinds and the bundled CTR model   -> ctr.json/.md
#   checks  at once, each in its own processes (correctness only, nothing timed):
#           the backend's CUDA tests (pytest -m gpu)                                    -> pytest-gpu.txt
#           bench/models.py --device cuda, one process per zoo model (frozen round trips) -> models/*.json
#           bench/opinfo_coverage.py --device cuda, one process per route               -> opinfo-cuda-*.json
#   zoo     bench/backend_vs_inductor.py on the tangle and the zoo, merged with ctr     -> all.json/.md
#   tune    bench/tune.py: fxlens-cli tune on the zoo, a CTR model and tangle200 (TUNE_S s each;
#           TUNE_MODELS picks)
#                                                                   -> tune.json/.md, tune/*.html
#   compiled  bench/compiled.py: profile --compiled (Inductor, kernels attributed to FX nodes) on
#           tangle200, BERT-base and a CTR model, original and optimized -> compiled.json/.md,
#           compiled/*.json.gz (the graphs and their profiles, for the app)
#
# Seen on an H200 machine (16 cores): build 56 s (ccache empty), the CTR phase 88 s; in the checks
# phase, with everything at once, ResNet-50 through four exporters took ~200 s and both OpInfo routes
# ran past 200 s: give CHECK_S 420 or more. OpInfo's per-op progress lines go to opinfo-ROUTE.log.
# Progress goes to OUT_DIR/progress.txt; OUT_DIR/done is written at the end, and everything is
# packed into OUT_DIR/results.tar.gz after each phase (so that a caller can take it while later
# phases run).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=$(mkdir -p "${1:-/tmp/fxlens-gpu-all}" && cd "${1:-/tmp/fxlens-gpu-all}" && pwd)
PY=${PYTHON:-python3}
PHASES=${PHASES:-checks ctr zoo}
CTR=deepfm,dcn,xdeepfm,autoint,ctr
log() { echo "$(date +%T) $*" | tee -a "$OUT/progress.txt"; }
pack() { tar -czf /tmp/fxlens-gpu-results.tgz -C "$OUT" --exclude results.tar.gz . 2>/dev/null
  mv /tmp/fxlens-gpu-results.tgz "$OUT/results.tar.gz"; }
rm -f "$OUT/done"
trap 'touch "$OUT/done"' EXIT  # also when a phase fails: whoever waits stops waiting

log "build"
BUILD_ONLY=1 scripts/gpu-check.sh "$OUT" > "$OUT/build.txt" 2>&1 || { log "build failed"; tail -30 "$OUT/build.txt"; pack; exit 1; }
ls python/fxlens/_core*.so >/dev/null 2>&1 || { log "fxlens._core was not built"; pack; exit 1; }
if [ -d .deps/root ]; then
  export LD_LIBRARY_PATH="$PWD/.deps/root/lib/x86_64-linux-gnu:$PWD/.deps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
export FXLENS_CLI=$PWD/build-gpu/app/fxlens-cli PYTHONPATH=$PWD/python:$PWD/python/tests:${PYTHONPATH:-} PYTHONUNBUFFERED=1
imp=$($PY -c 'import fxlens._core as c; print(c.__file__)' 2>&1) || { log "import fxlens._core failed: $imp"; pack; exit 1; }
log "import: $imp"
bench() { $PY bench/backend_vs_inductor.py --quiet "$@" 2>&1 | grep -v -i "warn"; }
log "built; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
pack

for phase in $PHASES; do
  log "phase $phase"
  case $phase in
    ctr)
      bench --models $CTR --json "$OUT/ctr.json" --out "$OUT/ctr.md" > "$OUT/ctr.log" ;;
    checks)
      mkdir -p "$OUT/models"
      ( timeout ${CHECK_S:-420} $PY -m pytest -q -rs -m gpu -p no:cacheprovider python/tests/test_backend.py > "$OUT/pytest-gpu.txt" 2>&1
        log "pytest -m gpu: exit $?" ) &
      for route in fx dynamo; do
        ( OMP_NUM_THREADS=2 timeout ${CHECK_S:-420} $PY bench/opinfo_coverage.py --device cuda --route $route --workers 8 \
            --json "$OUT/opinfo-cuda-$route.json" > "$OUT/opinfo-$route.log" 2>&1
          log "opinfo $route: exit $?" ) &
      done
      for m in $($PY -c 'import sys; sys.path.insert(0, "bench"); import models; print(" ".join(models.MODELS))'); do
        ( OMP_NUM_THREADS=1 timeout ${CHECK_S:-420} $PY bench/models.py --models "$m" --device cuda --out "/tmp/fxlens-models/$m" \
            --no-md --json "$OUT/models/$m.json" > "$OUT/models/$m.log" 2>&1
          log "models $m: exit $?" ) &
      done
      wait ;;
    zoo)
      merge=(); [ -f "$OUT/ctr.json" ] && merge=(--merge "$OUT/ctr.json")
      bench --exclude $CTR --tangle "${TANGLE:-50}" "${merge[@]}" --json "$OUT/all.json" --out "$OUT/all.md" \
        > "$OUT/zoo.log" ;;
    tune)
      mkdir -p "$OUT/tune"
      $PY bench/tune.py --device cuda --models "${TUNE_MODELS:-ctr,resnet50,bert_base,gpt2,tangle200}" --budget "${TUNE_S:-120}" --out /tmp/fxlens-tune --json "$OUT/tune.json" > "$OUT/tune.md" 2>&1
      cp /tmp/fxlens-tune/*.report.html /tmp/fxlens-tune/*.trace.json "$OUT/tune/" 2>/dev/null ;;
    compiled)
      rm -rf /tmp/fxlens-compiled; mkdir -p "$OUT/compiled"
      FXLENS_PYTHON=$PY timeout ${COMPILED_S:-480} $PY bench/compiled.py --device cuda --jobs "${COMPILED_JOBS:-3}" --timeout "${COMPILED_ONE_S:-420}" \
        --out /tmp/fxlens-compiled --json "$OUT/compiled.json" > "$OUT/compiled.md" 2> "$OUT/compiled.log"
      for f in /tmp/fxlens-compiled/*.json; do gzip -c "$f" > "$OUT/compiled/$(basename "$f").gz"; done
      cp /tmp/fxlens-compiled/*.log "$OUT/compiled/" 2>/dev/null ;;
  esac
  log "phase $phase ended"
  pack
done
log "done"
pack
