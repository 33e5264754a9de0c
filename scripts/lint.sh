#!/usr/bin/env bash
# clang-format check and clang-tidy (.clang-format, .clang-tidy) over the project's C++ sources.
#   scripts/lint.sh           check formatting (scripts/format.sh) and run clang-tidy on the Qt-free and LibTorch-free sources
#   scripts/lint.sh --all     clang-tidy on every source in build/compile_commands.json (slow: LibTorch headers)
#   scripts/lint.sh --fix     reformat in place (scripts/format.sh --fix)
#   scripts/sizes.py --check  files over ~800 lines and functions over ~100 (docs/DESIGN.md)
# CI runs the format and size checks (ctest -L lint), not clang-tidy (about 4 s of CPU per source:
# some 2.5 minutes on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fix" ]; then
  exec scripts/format.sh --fix
fi
scripts/format.sh
# clang-tidy needs one compile command per source: the unity build's database (build/) names the
# unity batches instead, so the LibTorch-free sources are checked against build-nounity/
# (scripts/nonunity.sh configures it).
DB=build-nounity
[ "${1:-}" = "--all" ] && DB=build
[ -f $DB/compile_commands.json ] || { echo "lint.sh: configure $DB first (scripts/nonunity.sh, scripts/setup.sh)" >&2; exit 1; }
if [ "${1:-}" = "--all" ]; then
  TIDY=$(git ls-files 'core/*.cpp' 'patterns/*.cpp' 'views/*.cpp' 'app/*.cpp')
else
  TIDY=$(git ls-files 'core/*.cpp' 'patterns/*.cpp' 'app/cli/*.cpp' | grep -v -e '^core/exec/' -e 'ExecCommands.cpp')
fi
# shellcheck disable=SC2086
run-clang-tidy -quiet -p $DB -j "$(nproc)" $TIDY 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | grep -E '^/.*(warning|error):' | sort -u || true
