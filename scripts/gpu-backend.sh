#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fxlens inside torch.compile on a GPU server (no Qt/Graphviz; see scripts/gpu-check.sh for the
# dependencies it carries): builds core + CLI + executor + the extension fxlens._core against the
# machine's own Python and PyTorch, runs the CUDA tests of the backend and the frozen path, then
# bench/backend_vs_inductor.py with the arguments given after the output folder.
#
#   scripts/gpu-backend.sh OUT_DIR [bench arguments...]     (SKIP_TESTS=1: the benchmark only)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/fxlens-gpu-backend}
shift || true
mkdir -p "$OUT"
PY=${PYTHON:-python3}
BUILD_ONLY=1 scripts/gpu-check.sh "$OUT" | tail -3
ls python/fxlens/_core*.so >/dev/null || { echo "fxlens._core was not built (nanobind or Python headers missing?)"; exit 1; }
export FXLENS_CLI=$PWD/build-gpu/app/fxlens-cli PYTHONPATH=$PWD/python:$PWD/python/tests:${PYTHONPATH:-} PYTHONUNBUFFERED=1
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  echo "== backend and frozen path on CUDA"
  $PY -m pytest -q -rs -m gpu -p no:cacheprovider python/tests/test_backend.py 2>&1 | tail -8
fi
if [ $# -gt 0 ]; then
  echo "== bench/backend_vs_inductor.py $*"
  $PY bench/backend_vs_inductor.py "$@" 2>&1 | grep -v -i "warn" | tail -60
fi
