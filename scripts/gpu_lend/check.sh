#!/usr/bin/env bash
# On the GPU machine, after build_module.sh: checks the module
# loads beside PyTorch in both orders, runs `perseus doctor`, then the whole gpu_check
# (docs/real_gpu.md), passing it any further arguments. Writes doctor.json and gpu_check.json
# to OUT_DIR.
#
#   scripts/gpu_lend/check.sh [KIT_DIR (<repo>/.devkit)] [PREFIX (/tmp/perseus-kit)] [OUT_DIR (.)] [gpu_check options]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kit=$(realpath -m "${1:-$repo/.devkit}")
prefix=$(realpath -m "${2:-/tmp/perseus-kit}")
out=$(realpath -m "${3:-.}")
shift $(($# < 3 ? $# : 3))
py=${PY:-python3}
if [[ ! -x $kit/perseus ]] || ! compgen -G "$prefix/python/perseus/_perseus*.so" >/dev/null; then
  echo "check.sh: no kit in $kit or no module built in $prefix (run scripts/gpu_lend/build_module.sh $kit $prefix)" >&2
  exit 1
fi
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$prefix/python${PYTHONPATH:+:$PYTHONPATH}
export PERSEUS_CLI=$kit/perseus
mkdir -p "$out"
"$PERSEUS_CLI" --version || exit 1
$py -c "import torch, perseus; print('import torch, then perseus: ok (torch %s)' % torch.__version__)" || exit 1
$py -c "import perseus, torch; print('import perseus, then torch: ok')" || exit 1
"$PERSEUS_CLI" doctor
"$PERSEUS_CLI" doctor --json >"$out/doctor.json"
PYTHONUNBUFFERED=1 $py -m perseus.gpu_check --json "$out/gpu_check.json" "$@"
