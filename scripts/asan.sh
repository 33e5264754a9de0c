#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (GCC).
#   scripts/asan.sh          the whole suite (preset dev-asan, build-asan/): every C++ test, the CLI, the
#                            window offscreen, the Python suites calling the instrumented fxlens-cli;
#                            not memcheck, models, fuzz or packaging (docs/RELIABILITY.md)
#   scripts/asan.sh quick    the Qt-free, LibTorch-free units (core, patterns, pattern language, layout,
#                            profile, CLI) in build-asan-quick/: what CI runs after the suite
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
export ASAN_OPTIONS=detect_leaks=0:detect_odr_violation=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "${1:-}" = "quick" ]; then
  B=build-asan-quick
  if [ ! -f $B/build.ninja ]; then
    FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-O1 $FLAGS" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DFXLENS_EXPENSIVE_CHECKS=ON \
      -DFXLENS_WITH_TORCH=OFF -DFXLENS_BUILD_GUI=OFF -DFXLENS_BUILD_BENCH=OFF -DFXLENS_BUILD_PYTHON=OFF >/dev/null
  fi
  cmake --build $B -j "$(nproc)"
  QT_QPA_PLATFORM=offscreen ctest --test-dir $B -j "$(nproc)" --output-on-failure -L "core|cli" -LE "fuzz|packaging|memcheck|models"
  exit 0
fi
TORCH_PREFIX=$(.venv/bin/python -c 'import torch;print(torch.utils.cmake_prefix_path)')
[ -f build-asan/build.ninja ] || cmake --preset dev-asan -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" >/dev/null
cmake --build build-asan -j "$(nproc)"
ctest --preset dev-asan "$@"
