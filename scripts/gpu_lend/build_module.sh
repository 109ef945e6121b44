#!/usr/bin/env bash
# On the GPU machine: builds the perseus Python module for its
# python3 (or $PY) from the kit scripts/gpu_lend/prepare.sh made. The package lands in
# PREFIX/python/perseus (use PYTHONPATH=PREFIX/python) and the kit's shared libraries that
# machine lacks in PREFIX/lib (use LD_LIBRARY_PATH=PREFIX/lib). A PREFIX that holds something
# other than such a build is refused, not emptied.
#
#   scripts/gpu_lend/build_module.sh [KIT_DIR (<repo>/.devkit)] [PREFIX (/tmp/perseus-kit)]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kit=$(realpath -m "${1:-$repo/.devkit}")
prefix=$(realpath -m "${2:-/tmp/perseus-kit}")
py=${PY:-python3}
cd "$repo" || exit 1
[[ -f $kit/link.txt ]] || { echo "build_module.sh: no kit in $kit (scripts/gpu_lend/prepare.sh makes one)" >&2; exit 1; }
if [[ -e $prefix && ! -f $prefix/.perseus-kit-build ]] && [[ -n $(ls -A "$prefix" 2>/dev/null) ]]; then
  echo "build_module.sh: $prefix exists and holds something else: give a new or empty folder" >&2
  exit 1
fi
rm -rf "$prefix"
mkdir -p "$prefix/lib" "$prefix/python/perseus" "$prefix/obj"
touch "$prefix/.perseus-kit-build"
known=$(ldconfig -p 2>/dev/null)
for f in "$kit"/lib/*; do
  so=$(basename "$f")
  grep -q "^[[:space:]]*$so " <<<"$known" || cp "$f" "$prefix/lib/"
done
echo "build_module.sh: the kit's libraries this machine lacks: $(ls "$prefix/lib" | tr '\n' ' ')"
pyinc=$($py -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
ext=$($py -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cp python/perseus/*.py python/perseus/*.pyi python/perseus/py.typed "$prefix/python/perseus/"
mapfile -t compile_flags <"$kit/compile_flags.txt"
mapfile -t link_flags < <(sed "s|@SOURCE@|$repo|g" "$kit/link_flags.txt")
compile() {  # $1: the pybind11 include directory
  local pids=() failed=0 f p
  for f in bindings bind_client bind_optimizer; do
    g++ -std=c++20 -O2 -fPIC "${compile_flags[@]}" \
      -Iinclude -Isrc -I"$kit/generated" -isystem "$1" -isystem "$kit/include" -isystem "$pyinc" \
      -c "python/$f.cc" -o "$prefix/obj/$f.o" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  return $failed
}
pybind11_dir=$($py -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || true)
echo "build_module.sh: Python headers $pyinc, pybind11 ${pybind11_dir:-not installed}, g++ $(g++ -dumpfullversion)"
if [[ -z $pybind11_dir ]] || ! compile "$pybind11_dir"; then
  echo "build_module.sh: compiling with the kit's pybind11 headers instead"
  compile "$kit/pybind11_headers" || { echo "build_module.sh: compiling the module failed" >&2; exit 1; }
fi
libs=()
while read -r l; do
  case $l in -l*) libs+=("$l") ;; *) libs+=("$kit/$l") ;; esac
done <"$kit/link.txt"
g++ -shared -o "$prefix/python/perseus/_perseus$ext" "$prefix"/obj/*.o "${link_flags[@]}" "${libs[@]}" ||
  { echo "build_module.sh: linking the module failed" >&2; exit 1; }
echo "build_module.sh: built $prefix/python/perseus/_perseus$ext"
