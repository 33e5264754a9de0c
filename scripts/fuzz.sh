#!/usr/bin/env bash
# The libFuzzer targets: a clang build of core + patterns with ASan + UBSan (build-fuzz/), seed corpora
# from the bundled files, and bounded runs.
#   scripts/fuzz.sh build                 configure + build build-fuzz
#   scripts/fuzz.sh run TARGET SECONDS [libFuzzer flags]
#                                         one target (graph_reader, profile, safetensors, pattern_lang, engine)
#   scripts/fuzz.sh smoke [SECONDS]       every target for SECONDS each (default 8): what CI runs
#   scripts/fuzz.sh long [RUNS]           every target for RUNS executions (default 1000000), stats to stdout
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${FXLENS_FUZZ_BUILD:-$ROOT/build-fuzz}
TARGETS=(graph_reader profile safetensors pattern_lang engine)

build() {
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1
  if [ ! -f "$B/build.ninja" ]; then
    cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DFXLENS_FUZZ=ON -DFXLENS_BUILD_GUI=OFF -DFXLENS_WITH_GRAPHVIZ=OFF -DFXLENS_WITH_TORCH=OFF -DFXLENS_BUILD_TESTS=OFF \
      -DFXLENS_BUILD_BENCH=OFF >/dev/null
  fi
  cmake --build "$B" -j "$(nproc)" --target $(printf 'fuzz_%s ' "${TARGETS[@]}") >/dev/null
}

# Seeds: the bundled files each target reads.
seeds() {
  local t=$1 dir=$B/corpus/$t
  mkdir -p "$dir"
  case $t in
    graph_reader) cp resources/examples/*.json tests/data/malformed/*.json* "$dir"/ 2>/dev/null
                  ls tests/data/patterns/*.json | head -40 | xargs -I{} cp {} "$dir"/ ;;
    profile) cp tests/data/profile/*.json tests/data/malformed/profiles/*.json "$dir"/ ;;
    safetensors) cp resources/examples/*.safetensors tests/data/malformed/safetensors/* "$dir"/ ;;
    pattern_lang) cp patterns/*.fxpat tests/data/lang/bad/*.fxpat tests/data/malformed/patterns/*.fxpat "$dir"/ ;;
    engine) [ -n "$(ls -A "$dir")" ] || python3 -c "
import random, sys
r = random.Random(0)
for i in range(64):
    open(sys.argv[1] + '/seed_%02d' % i, 'wb').write(bytes(r.randrange(256) for _ in range(64)))" "$dir" ;;
  esac
  echo "$dir"
}

run() {
  local t=$1; shift
  local dir; dir=$(seeds "$t")
  mkdir -p "$B/artifacts/$t"
  FXLENS_PATTERN_DIR=$ROOT/patterns ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "$B/tests/fuzz/fuzz_$t" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$B/artifacts/$t/" "$@" "$dir"
}

case ${1:-smoke} in
  build) build ;;
  run) build; t=$2; secs=${3:-60}; shift 3 || shift $#; run "$t" -max_total_time="$secs" "$@" ;;
  smoke) build; rm -rf "$B/artifacts"; for t in "${TARGETS[@]}"; do echo "== fuzz_$t"; run "$t" -max_total_time="${2:-8}" -seed=1 2>&1 | grep -E "^stat::|ERROR|SUMMARY|Done" || true; done
         ls "$B"/artifacts/*/crash-* "$B"/artifacts/*/leak-* "$B"/artifacts/*/timeout-* "$B"/artifacts/*/oom-* 2>/dev/null && exit 1 || exit 0 ;;
  long) build; for t in "${TARGETS[@]}"; do echo "== fuzz_$t"; run "$t" -runs="${2:-1000000}" 2>&1 | grep -E "^stat::|ERROR|SUMMARY|Done" || true; done ;;
  *) echo "usage: scripts/fuzz.sh build|run TARGET SECONDS|smoke [SECONDS]|long [RUNS]" >&2; exit 2 ;;
esac
