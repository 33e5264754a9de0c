#!/usr/bin/env bash
# Runs the test suite (C++ Qt Test executables, the CLI, the GUI offscreen, the Python companion,
# packaging). Without arguments everything but the long runs: the model runs (label `models`: real
# architectures through every exporter), the fuzz smoke run and the app under valgrind (labels
# `fuzz`, `memcheck`); CI runs those too (`scripts/test.sh -L models`, `-L "fuzz|memcheck"`).
# Arguments go to ctest instead (`-L models`, `-R tst_Layout`, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
[ -f build/build.ninja ] || FXLENS_NO_RUN=1 scripts/setup.sh
cmake --build build -j "$(nproc)"
[ $# -gt 0 ] || set -- -LE "models|fuzz|memcheck"
QT_QPA_PLATFORM=offscreen ctest --test-dir build -j "$(nproc)" --output-on-failure "$@"
