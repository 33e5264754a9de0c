#!/usr/bin/env bash
# clang-format check and clang-tidy (.clang-format, .clang-tidy) over the project's C++ sources.
#   scripts/lint.sh           check formatting and run clang-tidy on the Qt-free and LibTorch-free sources
#   scripts/lint.sh --all     clang-tidy on every source in build/compile_commands.json (slow: LibTorch headers)
#   scripts/lint.sh --fix     reformat in place
#   scripts/sizes.py          files over ~800 lines and functions over ~100 (docs/DESIGN.md)
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=$(git ls-files 'core/*.cpp' 'core/*.h' 'patterns/*.cpp' 'patterns/*.h' 'views/*.cpp' 'views/*.h' 'app/*.cpp' 'app/*.h' \
        'tests/*.cpp' 'tests/*.h' 'bench/*.cpp')
if [ "${1:-}" = "--fix" ]; then
  echo "$FILES" | xargs clang-format -i --style=file
  exit 0
fi
echo "$FILES" | xargs clang-format --dry-run --Werror --style=file
[ -f build/compile_commands.json ] || { echo "lint.sh: configure first (scripts/setup.sh)" >&2; exit 1; }
if [ "${1:-}" = "--all" ]; then
  TIDY=$(git ls-files 'core/*.cpp' 'patterns/*.cpp' 'views/*.cpp' 'app/*.cpp')
else
  TIDY=$(git ls-files 'core/*.cpp' 'patterns/*.cpp' 'app/cli/*.cpp' | grep -v -e '^core/exec/' -e 'ExecCommands.cpp')
fi
# shellcheck disable=SC2086
run-clang-tidy -quiet -p build -j "$(nproc)" $TIDY 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | grep -E '^/.*(warning|error):' | sort -u || true
