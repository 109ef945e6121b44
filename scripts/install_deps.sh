#!/usr/bin/env bash
# Installs the Debian packages perseus builds and tests with (idempotent: does
# nothing when they are all present). Needs root or sudo for apt-get.
set -euo pipefail
packages=(
  build-essential cmake ninja-build
  liblemon-dev libglpk-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-pybind11 python3-dev python3-pytest
  libeigen3-dev python3-torch python3-numpy python3-scipy
  help2man python3-venv python3-pip python3-setuptools python3-wheel python3-mypy openssl python3-yaml
  libpng-dev chromium prometheus
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "perseus: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
