#!/usr/bin/env bash
# Runs the whole test suite (C++ Qt Test executables, the CLI, the GUI offscreen, the Python companion).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
[ -f build/build.ninja ] || FXLENS_NO_RUN=1 scripts/setup.sh
cmake --build build -j "$(nproc)"
QT_QPA_PLATFORM=offscreen ctest --test-dir build -j "$(nproc)" --output-on-failure "$@"
