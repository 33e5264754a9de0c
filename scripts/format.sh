#!/usr/bin/env bash
# The C++ formatting rule (.clang-format, clang-format 14) over core/, patterns/, views/, app/,
# tests/ and bench/. Files in scripts/format-pending.txt are not formatted yet and are left out of
# the check; every other file (a new one too) must be formatted.
#   scripts/format.sh                check (ctest lint_format, label lint); fails on any unformatted file
#   scripts/format.sh --fix          format every file, and empty scripts/format-pending.txt
#   scripts/format.sh --fix FILE...  format these files, and take them off the pending list
set -euo pipefail
cd "$(dirname "$0")/.."
PENDING=scripts/format-pending.txt
CF=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
[ -n "$CF" ] || { echo "format.sh: clang-format 14 not found (apt-get install clang-format)" >&2; exit 2; }
"$CF" --version | grep -q 'version 14\.' || { echo "format.sh: $CF is not clang-format 14: $("$CF" --version)" >&2; exit 2; }

# Tracked and new (not ignored) sources.
sources() {
  git ls-files --cached --others --exclude-standard -- \
    'core/*.cpp' 'core/*.h' 'patterns/*.cpp' 'patterns/*.h' 'views/*.cpp' 'views/*.h' 'app/*.cpp' 'app/*.h' \
    'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done
}
pending() { grep -v -e '^#' -e '^$' "$PENDING" || true; }
header() { grep '^#' "$PENDING"; }

if [ "${1:-}" = "--fix" ]; then
  shift
  if [ $# -eq 0 ]; then
    sources | xargs "$CF" -i --style=file
    header >"$PENDING.new" && mv "$PENDING.new" "$PENDING"
    echo "format.sh: formatted $(sources | wc -l) files; $PENDING is empty"
  else
    "$CF" -i --style=file "$@"
    { header; pending | grep -v -x -F "$(printf '%s\n' "$@")" || true; } >"$PENDING.new" && mv "$PENDING.new" "$PENDING"
  fi
  exit 0
fi

status=0
checked=$(comm -23 <(sources) <(pending | sort -u))
[ -z "$checked" ] || echo "$checked" | xargs "$CF" --dry-run --Werror --style=file || status=1
for f in $(pending); do
  if [ ! -f "$f" ]; then
    echo "format.sh: note: $f (in $PENDING) does not exist"
  elif "$CF" --dry-run --Werror --style=file "$f" >/dev/null 2>&1; then
    echo "format.sh: note: $f is formatted now: take it off $PENDING"
  fi
done
if [ $status -ne 0 ]; then
  echo "format.sh: FAILED: files above are not formatted: scripts/format.sh --fix FILE... formats them" >&2
else
  echo "format.sh: $(echo "$checked" | wc -l) files formatted, $(pending | wc -l) pending ($PENDING)"
fi
exit $status
