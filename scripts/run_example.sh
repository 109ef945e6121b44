#!/usr/bin/env bash
# Quick start 1: builds perseus and computes the frontier of the bundled
# GPT-3 XL on A100 example into out/gpt3-xl-a100/. Extra arguments are passed
# to `perseus optimize` (e.g. --zeus-plans).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev --target perseus
./build/dev/src/cli/perseus optimize --example gpt3-xl-a100 --out out/gpt3-xl-a100 "$@"
