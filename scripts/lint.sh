#!/usr/bin/env bash
# clang-format check and clang-tidy (.clang-format, .clang-tidy) over the project's C++ sources.
#   scripts/lint.sh           check formatting (scripts/format.sh) and list clang-tidy's warnings on the
#                             Qt-free and LibTorch-free sources
#   scripts/lint.sh --tidy    clang-tidy alone on those sources: fails on any warning outside
#                             scripts/tidy-pending.txt's files (CI runs it)
#   scripts/lint.sh --all     list clang-tidy's warnings on every source in build/compile_commands.json
#                             (slow: LibTorch headers)
#   scripts/lint.sh --fix     reformat in place (scripts/format.sh --fix)
#   scripts/sizes.py --check  files over ~800 lines and functions over ~100 (docs/DESIGN.md)
# CI runs the format and size checks (ctest -L lint) and `--tidy` after scripts/nonunity.sh (.ci/run).
# clang-tidy takes about 4 s of CPU per source: --tidy costs some 2.5 minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-}
case "$MODE" in
--fix) exec scripts/format.sh --fix ;;
"") scripts/format.sh ;;
--tidy | --all) ;;
*)
  echo "usage: scripts/lint.sh [--tidy|--all|--fix]" >&2
  exit 2
  ;;
esac
# clang-tidy needs one compile command per source: the unity build's database (build/) names the
# unity batches instead, so the LibTorch-free sources are checked against build-nounity/
# (scripts/nonunity.sh configures it).
DB=build-nounity
[ "$MODE" = "--all" ] && DB=build
[ -f $DB/compile_commands.json ] || {
  echo "lint.sh: configure $DB first (scripts/nonunity.sh, scripts/setup.sh)" >&2
  exit 1
}
if [ "$MODE" = "--all" ]; then
  TIDY=$(git ls-files 'core/*.cpp' 'patterns/*.cpp' 'views/*.cpp' 'app/*.cpp')
else
  TIDY=$(git ls-files 'core/*.cpp' 'patterns/*.cpp' 'app/cli/*.cpp' | grep -v -e '^core/exec/' -e 'ExecCommands.cpp' -e 'MeasureExec.cpp')
fi
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
# run-clang-tidy fails when clang-tidy does (a source that does not compile); warnings alone do not
# fail it, so --tidy counts them.
STATUS=0
# shellcheck disable=SC2086
run-clang-tidy -quiet -p $DB -j "$(nproc)" $TIDY >"$OUT" 2>/dev/null || STATUS=$?
FOUND=$(sed -e 's/\x1b\[[0-9;]*m//g' -e "s|^$PWD/||" "$OUT" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' | sort -u || true)
if [ "$MODE" != "--tidy" ]; then
  [ -z "$FOUND" ] || echo "$FOUND"
  exit 0
fi
# Warnings in scripts/tidy-pending.txt's files are shown, not counted; every other one fails.
PENDING=$(grep -v -e '^#' -e '^$' scripts/tidy-pending.txt)
FAILING=0 PENDING_WARNINGS=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  if grep -qxF "${line%%:*}" <<<"$PENDING"; then
    echo "$line (pending: scripts/tidy-pending.txt)"
    PENDING_WARNINGS=$((PENDING_WARNINGS + 1))
  else
    echo "$line"
    FAILING=$((FAILING + 1))
  fi
done <<<"$FOUND"
for f in $PENDING; do
  grep -q "^$f:" <<<"$FOUND" || echo "lint.sh: note: $f has no clang-tidy warnings now: take it off scripts/tidy-pending.txt"
done
if [ "$STATUS" -ne 0 ] || [ "$FAILING" -ne 0 ]; then
  echo "lint.sh: clang-tidy: $FAILING warning(s) or error(s) (run-clang-tidy exit $STATUS): FAILED" >&2
  exit 1
fi
echo "lint.sh: clang-tidy: $(echo "$TIDY" | wc -l) sources, no warnings ($PENDING_WARNINGS pending in scripts/tidy-pending.txt): ok"
