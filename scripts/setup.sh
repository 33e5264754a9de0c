#!/usr/bin/env bash
# Installs everything fxlens needs on a fresh Debian machine, builds it, and runs the main job on a
# bundled example. Safe to re-run: every step skips what is already in place.
#   scripts/setup.sh            install + build + open the example (GUI with a display, else CLI)
#   FXLENS_NO_RUN=1 scripts/setup.sh   install + build only
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TORCH_VERSION=2.11.0
TORCHVISION_VERSION=0.26.0

APT_PACKAGES=(build-essential cmake ninja-build ccache pkg-config git
  qt6-base-dev qt6-svg-dev libgl-dev libgraphviz-dev graphviz nlohmann-json3-dev libsimdjson-dev zlib1g-dev
  xvfb xauth python3-venv clang libclang-rt-14-dev valgrind clang-format clang-tidy
  chromium)  # tune --report is checked in a real headless browser (tst_TuneCli)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  $SUDO apt-get clean  # the downloaded .deb files: CI disks are small
fi

# Project-local Python environment with the pinned torch (the LibTorch fxlens links is inside it).
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import torch,sys; sys.exit(0 if torch.__version__.startswith('$TORCH_VERSION') else 1)" 2>/dev/null; then
  echo "== installing torch $TORCH_VERSION (from pip's cache when present)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION"
fi
.venv/bin/python -c "import safetensors, pytest, numpy, nanobind" 2>/dev/null || .venv/bin/pip install -q safetensors pytest numpy "nanobind==3.1.0"
# The model zoo's architectures (bench/models.py, ctest -L models): pinned, weights never downloaded.
TIMM_VERSION=1.0.31
TRANSFORMERS_VERSION=5.24.0
.venv/bin/python -c "import timm, transformers, sys; sys.exit(0 if (timm.__version__, transformers.__version__) == ('$TIMM_VERSION', '$TRANSFORMERS_VERSION') else 1)" 2>/dev/null ||
  .venv/bin/pip install -q "timm==$TIMM_VERSION" "transformers==$TRANSFORMERS_VERSION"
.venv/bin/python -c "import fxlens" 2>/dev/null || .venv/bin/pip install -q --no-deps -e python

echo "== building"
export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1
TORCH_PREFIX=$(.venv/bin/python -c 'import torch;print(torch.utils.cmake_prefix_path)')
if [ ! -f build/build.ninja ]; then
  # The `dev` preset of CMakePresets.json (Ninja, RelWithDebInfo, ccache, the .venv's Python).
  cmake --preset dev -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" >/dev/null
fi
cmake --build build -j "$(nproc)"
# The libFuzzer targets: a clang build of core + patterns with ASan + UBSan (ctest -L fuzz runs them).
if command -v clang++ >/dev/null; then
  echo "== building the fuzz targets (build-fuzz)"
  scripts/fuzz.sh build
fi

if [ -n "${FXLENS_NO_RUN:-}" ] || [ -n "${CI:-}" ]; then
  exit 0
fi
EXAMPLE=resources/examples/tangle50_torch.json
echo "== main job: $EXAMPLE"
./build/app/fxlens-cli info "$EXAMPLE" | head -25
if [ -n "${DISPLAY:-}" ]; then
  exec ./build/app/gui/fxlens "$EXAMPLE"
else
  QT_QPA_PLATFORM=offscreen ./build/app/gui/fxlens "$EXAMPLE" --screenshot fxlens-example.png
  echo "no display: saved a screenshot of the window to fxlens-example.png"
fi
