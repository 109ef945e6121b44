#!/usr/bin/env bash
# Installs perseus the three ways docs/install.md describes and runs it from
# there, never from the build tree:
#   1. cmake --install into a fresh prefix: binaries, man pages, systemd units
#      (checked with systemd-analyze verify), the Python module;
#   2. cpack -G DEB: the package's metadata and contents, run after dpkg-deb -x;
#   3. pip install --no-build-isolation . into a fresh venv: import perseus,
#      the `perseus` command, the type stubs (mypy and stubtest).
# Usage: install_smoke.sh SOURCE_DIR BUILD_DIR (CTest passes both).
# PERSEUS_CMAKE_BUILD_DIR makes pip reuse BUILD_DIR instead of compiling
# everything again (setup.py checks it was configured for the same Python);
# PERSEUS_INSTALL_FRESH_BUILD=1 makes pip configure and build from scratch.
set -euo pipefail
# The installs only: a PYTHONPATH into the build tree (a developer's shell
# may export one) would import that copy instead.
unset PYTHONPATH
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
version=$(sed -n 's/^project(perseus VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() { echo "install_smoke: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
expect_file() { [ -e "$1" ] || fail "missing after install: $1"; }
# expect_line LINE COMMAND...: COMMAND succeeds and prints LINE (whole output read, no broken pipes).
expect_line() {
  local line=$1 out
  shift
  out=$("$@") || fail "$* failed"
  grep -qxF -- "$line" <<<"$out" || fail "$* did not print '$line': $out"
}

step "1. cmake --install --prefix $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >install.log || { cat install.log; fail "cmake --install"; }
p=$tmp/prefix
for f in bin/perseus bin/perseusd share/man/man1/perseus.1 share/man/man1/perseus-serve.1 share/man/man1/perseusd.1 \
         lib/systemd/system/perseusd.service lib/systemd/system/perseus-server.service \
         lib/python3/dist-packages/perseus/__init__.py lib/python3/dist-packages/perseus/_perseus.pyi \
         lib/python3/dist-packages/perseus/py.typed share/doc/perseus/LICENSE share/doc/perseus/docs/install.md; do
  expect_file "$p/$f"
done
ls "$p"/lib/python3/dist-packages/perseus/_perseus*.so >/dev/null || fail "no extension module installed"
if find "$p" \( -iname '*fake*' -o -iname 'libnvidia-ml*' -o -name '*_test' -o -name '*_bench' \) | grep .; then
  fail "test-only files were installed (above)"
fi
expect_line "perseus $version" "$p/bin/perseus" --version
expect_line "perseusd $version" "$p/bin/perseusd" --version
grep -qF '\-\-token\-file' "$p/share/man/man1/perseus-serve.1" || fail "perseus-serve(1) lacks the serve flags"
grep -qF '\-\-socket\-group' "$p/share/man/man1/perseusd.1" || fail "perseusd(1) lacks --socket"
# The quick start's first command, run by the installed binary.
"$p/bin/perseus" optimize --example gpt3-xl-a100 --out "$tmp/quickstart" >optimize.log || { cat optimize.log; fail "installed perseus optimize"; }
expect_file "$tmp/quickstart/plans.json"
grep -q "ExecStart=$p/bin/perseusd " "$p/lib/systemd/system/perseusd.service" || fail "perseusd.service does not run $p/bin/perseusd"
MANPATH="$p/share/man" systemd-analyze verify "$p"/lib/systemd/system/perseusd.service "$p"/lib/systemd/system/perseus-server.service \
  >verify.log 2>&1 || { cat verify.log; fail "systemd-analyze verify"; }
if grep -v "Failed to load configuration\|ignoring" verify.log | grep -q .; then cat verify.log; fail "systemd-analyze verify warned"; fi
PYTHONPATH="$p/lib/python3/dist-packages" /usr/bin/python3 - "$p" "$version" <<'PY'
import sys
import perseus
prefix, version = sys.argv[1], sys.argv[2]
assert perseus.__file__.startswith(prefix), f"imported {perseus.__file__}, not the installed module"
assert perseus.__version__ == version, perseus.__version__
profile = perseus.parse_profile_csv(
    "stage,instruction,frequency,time,energy\n"
    "0,forward,1410,0.010,3.0\n0,forward,1200,0.012,2.6\n0,backward,1410,0.020,6.0\n0,backward,1200,0.024,5.2\n")
frontier = perseus.solve_frontier(perseus.build_problem(profile, microbatches=2))
assert len(frontier.plans) >= 2, frontier.plans
print("installed module:", perseus.__file__, "plans:", len(frontier.plans))
PY

step "2. cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$tmp/pkg") >cpack.log 2>&1 || { cat cpack.log; fail "cpack"; }
deb=$(ls "$tmp"/pkg/perseus_"$version"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { ls -la "$tmp/pkg"; fail "no perseus_${version}_*.deb"; }
dpkg-deb -f "$deb" Package | grep -qx perseus || fail "package name"
dpkg-deb -f "$deb" Version | grep -qx "$version" || fail "package version"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libsqlite3 libcpp-httplib libstdc++6 python3; do
  echo "$depends" | grep -q "$lib" || fail "Depends lacks $lib: $depends"
done
dpkg-deb -c "$deb" >contents.txt
for f in ./usr/bin/perseus ./usr/bin/perseusd ./usr/lib/systemd/system/perseusd.service \
         ./usr/lib/systemd/system/perseus-server.service ./usr/share/man/man1/perseus.1 \
         ./usr/lib/python3/dist-packages/perseus/__init__.py; do
  grep -q " $f\$" contents.txt || fail "the package lacks $f"
done
if grep -qi "fake\|libnvidia-ml" contents.txt; then fail "the package holds test-only files"; fi
dpkg-deb -x "$deb" "$tmp/root"
expect_line "perseus $version" "$tmp/root/usr/bin/perseus" --version
grep -q "ExecStart=/usr/bin/perseus serve " "$tmp/root/usr/lib/systemd/system/perseus-server.service" ||
  fail "packaged perseus-server.service does not run /usr/bin/perseus"

step "3. pip install --no-build-isolation . into a fresh venv"
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
# A copy of the source tree (git's files only), so the in-tree build leaves no traces in the checkout.
mkdir "$tmp/src"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar cf - ) | (cd "$tmp/src" && tar xf -)
if [ "${PERSEUS_INSTALL_FRESH_BUILD:-0}" = 1 ]; then unset PERSEUS_CMAKE_BUILD_DIR; else export PERSEUS_CMAKE_BUILD_DIR="$build"; fi
"$tmp/venv/bin/pip" install --no-build-isolation --no-index "$tmp/src" >pip.log 2>&1 || { cat pip.log; fail "pip install"; }
cd "$tmp"
expect_line "perseus $version" "$tmp/venv/bin/perseus" --version
"$tmp/venv/bin/python" -c "
import perseus, perseus.torch
assert perseus.__file__.startswith('$tmp/venv/'), perseus.__file__
assert perseus.__version__ == '$version'
print('venv module:', perseus.__file__)"
expect_line "Version: $version" "$tmp/venv/bin/pip" show perseus
# The stubs match the module, and mypy uses them for user code.
"$tmp/venv/bin/python" -m mypy.stubtest --allowlist "$src/tests/install/stubtest_allowlist.txt" perseus._perseus >stubtest.log 2>&1 || { cat stubtest.log; fail "stubtest"; }
cat >good.py <<'PY'
import perseus
profile: perseus.Profile = perseus.load_profile("profile.csv")
frontier = perseus.solve_frontier(perseus.build_problem(profile, microbatches=8))
plan = frontier.no_slowdown_plan()
if plan is not None:
    seconds: float = plan.time_s
PY
cat >bad.py <<'PY'
import perseus
frontier = perseus.solve_frontier("not a problem")
PY
"$tmp/venv/bin/python" -m mypy --no-incremental good.py >mypy_good.log 2>&1 || { cat mypy_good.log; fail "mypy rejected correct use"; }
if "$tmp/venv/bin/python" -m mypy --no-incremental bad.py >mypy_bad.log 2>&1; then
  fail "mypy accepted solve_frontier(str): the stubs are not used"
fi
grep -q 'Argument 1 to "solve_frontier" has incompatible type "str"' mypy_bad.log || { cat mypy_bad.log; fail "mypy's error"; }
echo "install_smoke: OK (prefix, .deb, venv; perseus $version)"
