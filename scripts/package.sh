#!/usr/bin/env bash
# Builds the .deb (CPack) and the Python companion's wheel, and checks both install and run:
# the .deb unpacked into a scratch root (fxlens-cli --version, the patterns it ships, the app started
# offscreen on a bundled example, man pages, desktop entry, icon, AppStream metainfo), the wheel
# installed into a fresh virtual environment (metadata and extras).
#   scripts/package.sh [BUILD_DIR]      (default build/; packages land in BUILD_DIR/packages)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${1:-$ROOT/build}
OUT=$B/packages
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
fail() { echo "package check failed: $*" >&2; exit 1; }

echo "== .deb"
(cd "$B" && cpack -G DEB >/dev/null)
DEB=$(ls -t "$OUT"/fxlens_*_amd64.deb | head -1)
INFO=$(dpkg-deb -I "$DEB")
[[ $INFO == *"Package: fxlens"* ]] || fail "no control data in $DEB"
dpkg-deb -x "$DEB" "$SCRATCH/root"
R=$SCRATCH/root/usr
VERSION=$("$R/bin/fxlens-cli" --version)
[[ $VERSION == "fxlens-cli "* ]] || fail "fxlens-cli --version printed '$VERSION'"
echo "$VERSION"
if [ -e "$R/bin/fxlens-cli-exec" ]; then  # the commands that run graphs go to it
  "$R/bin/fxlens-cli" doctor | grep -q "^LibTorch [0-9]" || fail "fxlens-cli doctor does not reach fxlens-cli-exec"
fi
PATTERNS=$(FXLENS_PATTERN_DIR=$R/share/fxlens/patterns "$R/bin/fxlens-cli" patterns)
n=$(printf '%s\n' "$PATTERNS" | wc -l)
[ "$n" -ge 70 ] || fail "only $n patterns with the installed pattern files"
for f in share/man/man1/fxlens-cli.1 share/applications/io.github.fxlens.desktop share/metainfo/io.github.fxlens.metainfo.xml \
         share/icons/hicolor/scalable/apps/io.github.fxlens.svg share/fxlens/examples/tangle4_fx.json lib/fxlens/libfxlens_core.a; do
  [ -s "$R/$f" ] || fail "missing $f"
done
grep -q "^\.TH \"FXLENS-CLI\" 1" "$R/share/man/man1/fxlens-cli.1" && grep -q "optimize" "$R/share/man/man1/fxlens-cli.1" || fail "man page"
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net --pedantic "$R/share/metainfo/io.github.fxlens.metainfo.xml" >/dev/null 2>&1 ||
    appstreamcli validate --no-net "$R/share/metainfo/io.github.fxlens.metainfo.xml" || fail "AppStream metainfo"
fi
if [ -x "$R/bin/fxlens" ]; then
  [ -s "$R/share/man/man1/fxlens.1" ] || fail "missing fxlens(1)"
  APPV=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$R/bin/fxlens" --version)  # no display needed
  [[ $APPV == "fxlens "* ]] || fail "fxlens --version printed '$APPV'"
  QT_QPA_PLATFORM=offscreen "$R/bin/fxlens" "$R/share/fxlens/examples/tangle4_fx.json" --screenshot "$SCRATCH/app.png" 2>/dev/null
  [ -s "$SCRATCH/app.png" ] || fail "the app did not start offscreen"
  echo "fxlens (app) started offscreen: $(stat -c %s "$SCRATCH/app.png") byte screenshot"
fi

echo "== wheel"
PY=${FXLENS_PYTHON:-$ROOT/.venv/bin/python}
cp -r "$ROOT/python" "$SCRATCH/python"  # the build writes next to the sources: keep them clean
rm -rf "$SCRATCH/python/build" "$SCRATCH/python"/*.egg-info "$SCRATCH/python/tests" "$SCRATCH/python/fxlens/patterns"
# The extension fxlens._core (built by CMake into python/fxlens/ for this Python) and the pattern
# files that ship with fxlens go into the wheel, which is then tagged for this Python and platform.
EXT_SUFFIX=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[ -f "$SCRATCH/python/fxlens/_core$EXT_SUFFIX" ] || fail "python/fxlens/_core$EXT_SUFFIX is not built (FXLENS_BUILD_PYTHON, nanobind)"
strip --strip-debug "$SCRATCH/python/fxlens/_core$EXT_SUFFIX"  # the build keeps debug info; the wheel need not
mkdir -p "$SCRATCH/python/fxlens/patterns"
cp "$ROOT"/patterns/*.fxpat "$SCRATCH/python/fxlens/patterns/"
"$PY" -m pip wheel -q --no-deps --no-build-isolation "$SCRATCH/python" -w "$OUT" 2>/dev/null ||
  "$PY" -m pip wheel -q --no-deps "$SCRATCH/python" -w "$OUT"
WHL=$(ls -t "$OUT"/fxlens-*.whl | head -1)
python3 -m venv "$SCRATCH/venv"
"$SCRATCH/venv/bin/pip" install -q --no-deps --no-index "$WHL"
case "$(basename "$WHL")" in *-none-any.whl) fail "the wheel is not tagged for a platform: $(basename "$WHL")";; esac
"$SCRATCH/venv/bin/python" - <<'PYEOF'
import importlib.metadata as m, importlib.util, sys
md = m.metadata("fxlens")
extras = set(md.get_all("Provides-Extra") or [])
requires = md.get_all("Requires-Dist") or []
assert md["Name"] == "fxlens" and md["Version"], md
assert {"examples", "test"} <= extras, extras
assert any(r.startswith("torch") for r in requires), requires
assert importlib.util.find_spec("fxlens") is not None
# The extension loads and knows the built-in patterns and the pattern files shipped beside it (its
# package needs torch, which this venv lacks: the module is loaded on its own).
import glob, os
pkg = os.path.dirname(importlib.util.find_spec("fxlens").origin)
so = glob.glob(os.path.join(pkg, "_core*.so"))
assert so, os.listdir(pkg)
spec = importlib.util.spec_from_file_location("fxlens._core", so[0])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
names = [p["name"] for p in core.Engine(os.path.join(pkg, "patterns"), []).patterns()]
assert len(names) >= 70 and "split_cat_full" in names, names
print(f"wheel: fxlens {md['Version']}, extras {sorted(extras)}, fxlens._core with {len(names)} patterns")
PYEOF
echo "packages in $OUT"
