#!/usr/bin/env bash
# Runs the test suite (C++ Qt Test executables, the CLI, the GUI offscreen, the Python companion,
# fuzz smoke, packaging). Without arguments everything but the long model runs (label `models`:
# real architectures through every exporter, about two minutes more; CI runs them as well with
# `scripts/test.sh -L models`); arguments go to ctest instead (`-L models`, `-R tst_Layout`, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
[ -f build/build.ninja ] || FXLENS_NO_RUN=1 scripts/setup.sh
cmake --build build -j "$(nproc)"
[ $# -gt 0 ] || set -- -LE models
QT_QPA_PLATFORM=offscreen ctest --test-dir build -j "$(nproc)" --output-on-failure "$@"
