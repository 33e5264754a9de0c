#!/usr/bin/env bash
# Builds the LibTorch-free, Qt-free libraries (fxlens_core: ir, io, rewrite, profile, lang, layout;
# and fxlens_patterns) with FXLENS_UNITY=OFF in build-nounity/: every source must compile on its
# own (its own includes; no two files' helpers clash only because a unity batch hides them). CI
# runs it (.ci/run); ccache makes a second run take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
if [ ! -f build-nounity/build.ninja ]; then
  cmake -S . -B build-nounity -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFXLENS_UNITY=OFF -DFXLENS_EXPENSIVE_CHECKS=ON \
    -DFXLENS_WITH_TORCH=OFF -DFXLENS_BUILD_GUI=OFF -DFXLENS_WITH_GRAPHVIZ=OFF -DFXLENS_BUILD_TESTS=OFF \
    -DFXLENS_BUILD_BENCH=OFF -DFXLENS_BUILD_PYTHON=OFF >/dev/null
fi
cmake --build build-nounity -j "$(nproc)" --target fxlens_core fxlens_patterns
