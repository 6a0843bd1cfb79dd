#!/usr/bin/env bash
# Install what gpucheck's build needs and is missing, from the system package manager.
# Debian/Ubuntu: cmake, g++, CLI11, fmt, nlohmann-json, GoogleTest; for the tests only: cmark-gfm
# (renders the Markdown report), xmllint (validates JUnit XML), tar and gzip (read the bundle),
# python3 with PyYAML and shellcheck (check the CI examples and deploy manifests). The CUDA
# toolkit (headers and nvcc) is expected at /usr/local/cuda or named by CUDAToolkit_ROOT; it is
# not installed here.
set -euo pipefail

packages=(cmake g++ make libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev
  cmark-gfm libxml2-utils tar gzip python3 python3-yaml shellcheck)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "gpucheck: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq || echo "gpucheck: apt-get update failed; trying the cached package lists" >&2
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "gpucheck: no CUDA toolkit found (nvcc); install it from https://developer.nvidia.com/cuda-downloads" >&2
  echo "          or set CUDAToolkit_ROOT=/path/to/cuda" >&2
  exit 1
fi
