#!/usr/bin/env bash
# Quick start 2: builds everything with warnings as errors and runs the whole
# test suite (C++ unit, property and end-to-end tests, and the Python tests)
# through CTest. Tests that need ../shared/data skip with a message when it
# is absent; CI has it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
