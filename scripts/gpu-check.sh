#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds core + CLI + executor against the machine's own PyTorch (no Qt, no Graphviz) and runs the
# executor checks on CPU and CUDA plus the executor benchmark. For a GPU server without Qt/Graphviz:
#
#   scripts/gpu-check.sh [OUT_DIR]
#
# Dependencies that such a machine may lack (nlohmann-json, simdjson, zlib headers) are taken from
# .deps/root/usr when present (Debian packages unpacked with dpkg -x; see docs/DESIGN.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/fxlens-gpu-check}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
TORCH_PREFIX=$($PY -c 'import torch;print(torch.utils.cmake_prefix_path)')
PREFIX="$TORCH_PREFIX"
EXTRA=()
if [ -d .deps/root/usr ]; then
  DEPS=$PWD/.deps/root/usr
  PREFIX="$PREFIX;$DEPS"
  # The shared zlib (the static one is not position-independent, and the executor also builds as a
  # shared library for the in-process benchmark).
  EXTRA+=(-DZLIB_INCLUDE_DIR="$DEPS/include" -DZLIB_LIBRARY="$PWD/.deps/root/lib/x86_64-linux-gnu/libz.so.1")
  export LD_LIBRARY_PATH="$PWD/.deps/root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  export LD_LIBRARY_PATH="$DEPS/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
# fxlens._core for this Python (named, so that an interpreter-only Python found earlier by
# LibTorch's CMake files does not stand in for it).
EXTRA+=(-DFXLENS_PYTHON="$(command -v "$PY")")
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFXLENS_BUILD_GUI=OFF -DFXLENS_WITH_GRAPHVIZ=OFF \
  -DFXLENS_BUILD_TESTS=OFF -DFXLENS_WITH_TORCH=ON -DCMAKE_PREFIX_PATH="$PREFIX" "${EXTRA[@]}" > "$OUT/cmake.log" 2>&1 \
  || { tail -30 "$OUT/cmake.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "== doctor"; build-gpu/app/fxlens-cli doctor
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0
export FXLENS_CLI=$PWD/build-gpu/app/fxlens-cli PYTHONPATH=$PWD/python:${PYTHONPATH:-} PYTHONUNBUFFERED=1
echo "== executor vs PyTorch, CPU and CUDA (label gpu)"
$PY -m pytest -q -rs python/tests/test_executor.py python/tests/test_profile_gpu.py 2>&1 | tail -15
echo "== pattern corpus through fxlens-cli (numeric check in PyTorch)"
$PY -m pytest -q python/tests/test_pattern_cases.py 2>&1 | tail -3
echo "== executor overhead vs GraphModule.__call__ (one process, alternating calls)"
for dev in cpu cpu cuda; do
  $PY bench/exec_vs_python.py --n 200 --batch 1 --device $dev --repeat 200 --chain 2000 --capi build-gpu/bench/libfxlens_bench_capi.so 2>&1 \
    | grep -v -i warn | grep -v "return cls"
done
echo "== the same with fxlens in its own process (bench_exec)"
$PY bench/exec_vs_python.py --n 200 --batch 1 --device cpu --repeat 50 --separate --bench build-gpu/bench/bench_exec 2>&1 \
  | grep -v -i warn | grep -v "return cls"
