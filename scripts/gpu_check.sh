#!/usr/bin/env bash
# The first real GPU: checks this machine with `perseus doctor`, then profiles
# a real transformer layer offline at several SM clocks and measures the
# energy of the no-slowdown plan against all-maximum clocks
# (`python3 -m perseus.gpu_check`; docs/real_gpu.md explains the figures).
# Needs an NVIDIA GPU, PyTorch with CUDA, and root or a running perseusd
# (--daemon SOCKET) to lock clocks. Without a GPU it prints one line,
# "skipped: no NVIDIA GPU (...)", and exits 0.
#
#   scripts/gpu_check.sh [--gpu N] [--daemon SOCKET] [--quick] [other perseus.gpu_check options]
#
# Environment: PERSEUS_CLI names a built perseus binary (default: build one
# with the dev preset; its python module must sit in <build>/python, or set
# PERSEUS_PYTHONPATH); PYTHON the interpreter that has PyTorch (default
# python3); PERSEUS_NVML_LIBRARY (or --nvml-library) the NVML library (default
# libnvidia-ml.so.1; a path that does not exist is an error, not a skip).
set -euo pipefail

gpu=0
daemon=""
rest=()
while (($# > 0)); do
  case "$1" in
    --gpu) gpu="$2"; shift 2 ;;
    --daemon) daemon="$2"; shift 2 ;;
    # For doctor too, which reads the environment.
    --nvml-library) export PERSEUS_NVML_LIBRARY="$2"; shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
# A relative library path means the caller's folder, not ours.
if [[ "${PERSEUS_NVML_LIBRARY:-}" == */* && "${PERSEUS_NVML_LIBRARY}" != /* ]]; then
  export PERSEUS_NVML_LIBRARY="$PWD/$PERSEUS_NVML_LIBRARY"
fi
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"

skip() {
  echo "skipped: no NVIDIA GPU ($1)"
  exit 0
}

# A path given in PERSEUS_NVML_LIBRARY that is not there is a mistake, not a
# machine without a driver: an error (as perseus doctor says), before
# anything is built or run.
nvml_library="${PERSEUS_NVML_LIBRARY:-libnvidia-ml.so.1}"
if [[ "$nvml_library" == */* && ! -e "$nvml_library" ]]; then
  echo "gpu_check: error: $nvml_library does not exist: --nvml-library or PERSEUS_NVML_LIBRARY names a missing file (unset, the driver's libnvidia-ml.so.1 is looked for)" >&2
  exit 1
fi

# True when the driver's NVML library is certainly absent (checked before
# building anything).
nvml_missing() {
  local lib="$nvml_library"
  [[ "$lib" == */* ]] && return 1  # there (above): let doctor load it
  local ldconfig
  ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
  [[ -x "$ldconfig" ]] || return 1  # cannot tell: let doctor decide
  ! "$ldconfig" -p | grep -qF "$lib"
}

cli="${PERSEUS_CLI:-}"
if [[ -z "$cli" ]]; then
  if nvml_missing; then
    skip "no NVIDIA driver: $nvml_library not found"
  fi
  scripts/install_deps.sh
  # Build the python module for the interpreter that has PyTorch.
  cmake --preset dev -DPython_EXECUTABLE="$(command -v "$python")" >/dev/null
  cmake --build --preset dev --target perseus _perseus
  cli=build/dev/src/cli/perseus
fi
pythonpath="${PERSEUS_PYTHONPATH:-$(cd "$(dirname "$cli")/../.." && pwd)/python}"

daemon_args=()
[[ -n "$daemon" ]] && daemon_args=(--daemon "$daemon")

# Outlive a Ctrl-C that doctor answers by unlocking, reporting and ending by
# the signal: show its report. ':' and not '': doctor must not inherit the
# signals as ignored.
trap : INT TERM HUP
set +e
report="$("$cli" doctor --gpu "$gpu" "${daemon_args[@]}" 2>&1)"
rc=$?
set -e
trap - INT TERM HUP
if ((rc >= 128)); then  # doctor ended by a signal (it unlocks the clock first)
  echo "$report"
  echo "gpu_check: perseus doctor was interrupted" >&2
  exit "$rc"
fi
if ((rc != 0)); then
  reason="$(sed -n 's/^fail  NVML library  *\(no NVIDIA driver: .*\) (.*)$/\1/p' <<<"$report")"
  [[ -n "$reason" ]] && skip "$reason"
  grep -q '^fail  GPUs  *NVML sees no GPU' <<<"$report" && skip "NVML sees no GPU"
  echo "$report"
  echo "gpu_check: perseus doctor found problems (above); fix them and run again" >&2
  exit 1
fi
echo "$report"
echo
PYTHONPATH="$pythonpath${PYTHONPATH:+:$PYTHONPATH}" PERSEUS_CLI="$cli" \
  exec "$python" -m perseus.gpu_check --gpu "$gpu" "${daemon_args[@]}" "${rest[@]}"
