#!/usr/bin/env bash
# Packs, from a finished build, what building the perseus Python module needs on a GPU machine
# that has a C++ compiler and a Python with PyTorch but neither network access nor perseus's
# build dependencies (a lent or air-gapped node): the perseus binary, the module's static
# libraries in link order (position-independent, no LTO, so another g++ links them), the shared
# libraries the module and the binary need, and the third-party headers the module's sources
# include. Copy the repository with the kit inside it to that machine, then run there
# scripts/gpu_lend/build_module.sh and scripts/gpu_lend/check.sh. Relative paths are the
# caller's; a KIT_DIR that holds something other than a kit is refused, not emptied.
#
#   scripts/gpu_lend/prepare.sh [BUILD_DIR (<repo>/build/ci)] [KIT_DIR (<repo>/.devkit)]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "${1:-$repo/build/ci}")
kit=$(realpath -m "${2:-$repo/.devkit}")
ninja_file=$build/build.ninja
if [[ ! -f $ninja_file || ! -x $build/src/cli/perseus ]]; then
  echo "prepare.sh: no finished build in $build (cmake --preset ci && cmake --build build/ci)" >&2
  exit 1
fi
# A variable of the module's link rule, or of its bindings.cc compile rule, as CMake wrote it.
rule_variable() {  # $1: "link" or "compile"; $2: the variable
  local target='^build python\/perseus\/_perseus'
  [[ $1 == compile ]] && target='^build python\/CMakeFiles\/_perseus\.dir\/bindings\.cc\.o'
  awk -v key="$2" "/$target/ {f = 1} f && \$1 == key {sub(/^ *[A-Z_]+ = /, \"\"); print; exit}" "$ninja_file"
}
links=$(rule_variable link LINK_LIBRARIES)
if [[ -z $links ]]; then
  echo "prepare.sh: $ninja_file has no link line for the Python module (PERSEUS_BUILD_PYTHON=OFF?)" >&2
  exit 1
fi
if [[ -e $kit && ! -f $kit/.perseus-kit ]] && [[ -n $(ls -A "$kit" 2>/dev/null) ]]; then
  echo "prepare.sh: $kit exists and is not a kit: give a new or empty folder" >&2
  exit 1
fi
rm -rf "$kit"
mkdir -p "$kit/a" "$kit/lib" "$kit/include" "$kit/pybind11_headers" "$kit/generated"
touch "$kit/.perseus-kit"
cp "$build/src/cli/perseus" "$kit/"
cp -r "$build/generated/perseus" "$kit/generated/"

keep_shared() {  # copies a shared library under its soname; prints that name
  local real soname
  real=$(readlink -f "$1")
  soname=$(objdump -p "$real" | awk '/SONAME/ {print $2}')
  cp "$real" "$kit/lib/${soname:-$(basename "$real")}"
  echo "${soname:-$(basename "$real")}"
}
: >"$kit/link.txt"  # the module's libraries in link order, relative to the kit
for l in $links; do
  case $l in
    -l*) echo "$l" >>"$kit/link.txt" ;;
    *.a)
      f=$l
      [[ $f == /* ]] || f=$build/$f
      cp "$f" "$kit/a/"
      echo "a/$(basename "$f")" >>"$kit/link.txt"
      ;;
    *.so*)
      name=$(keep_shared "$l")
      echo "lib/$name" >>"$kit/link.txt"
      ;;
    *) echo "prepare.sh: unexpected entry in the module's link line: $l" >&2; exit 1 ;;
  esac
done
# What the binary and those libraries load at run time, except the C and C++ runtimes, which the
# GPU machine has (newer ones serve older binaries).
deps=$(ldd "$build/src/cli/perseus" "$kit"/lib/*)
if grep -q "not found" <<<"$deps"; then
  echo "prepare.sh: a library the binary or the module needs is missing here:" >&2
  grep "not found" <<<"$deps" | sort -u >&2
  exit 1
fi
for so in $(awk '/=>/ {print $3}' <<<"$deps" | sort -u); do
  case $(basename "$so") in
    libc.so* | libm.so* | libstdc++.so* | libgcc_s.so* | ld-linux* | libpthread.so* | libdl.so* | librt.so*) ;;
    *) keep_shared "$so" >/dev/null ;;
  esac
done
# The module's definitions, visibility and link flags as python/CMakeLists.txt sets them (the
# symbol policy that keeps it apart from PyTorch's libraries), one per line, the source folder
# written as @SOURCE@; LTO left out (the libraries are not LTO objects).
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
eval "set -- $(rule_variable compile DEFINES) $(rule_variable compile FLAGS)"
for f in "$@"; do
  case $f in -D* | -fvisibility=*) printf '%s\n' "$f" ;; esac
done >"$kit/compile_flags.txt"
eval "set -- $(rule_variable link LINK_FLAGS)"
for f in "$@"; do
  [[ $f == -flto* ]] || printf '%s\n' "${f//$source_dir/@SOURCE@}"
done >"$kit/link_flags.txt"
if ! grep -q -- '--version-script=' "$kit/link_flags.txt"; then
  echo "prepare.sh: $ninja_file gives the Python module no version script (python/CMakeLists.txt)" >&2
  exit 1
fi
cp -r /usr/include/nlohmann "$kit/include/"
# The pybind11 headers this build used: only where that machine's pybind11 is missing or fails.
pybind11_dir=$(sed -n 's/^pybind11_INCLUDE_DIRS:INTERNAL=\([^;]*\).*/\1/p' "$build/CMakeCache.txt")
if [[ ! -d $pybind11_dir/pybind11 ]]; then
  echo "prepare.sh: $build/CMakeCache.txt names no pybind11 headers (pybind11_INCLUDE_DIRS)" >&2
  exit 1
fi
cp -r "$pybind11_dir/pybind11" "$kit/pybind11_headers/"
echo "prepare.sh: kit in $kit ($(du -sh "$kit" | cut -f1)): $(wc -l <"$kit/link.txt") libraries to link"
