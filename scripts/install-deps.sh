#!/usr/bin/env bash
# Install what gpucheck's build needs and is missing, from the system package manager.
# Debian/Ubuntu: cmake, g++, CLI11, fmt, nlohmann-json, GoogleTest, zlib, toml++; for the tests only:
# cmark-gfm (renders the Markdown report), xmllint (validates JUnit XML), tar and gzip (read the
# bundle), python3-jsonschema (the tests validate every JSON report against the schemas with it),
# python3-prometheus-client (parses the Prometheus output),
# python3 with PyYAML and shellcheck (check the CI examples and deploy manifests), pip (the
# toolchain wheels below), binutils and man-db (inspect the portable binary and the man page). The CUDA
# toolkit (headers and nvcc) is expected at /usr/local/cuda or named by CUDAToolkit_ROOT; it is
# not installed here.
#
# The older CUDA compilers that build gpucheck's kernel images for older drivers (CUDA 11.8 and
# 12.9: NVRTC and ptxas, NVIDIA's Python wheels from PyPI) go into GPUCHECK_TOOLCHAINS_DIR
# (default ~/.cache/gpucheck/toolchains, where cmake/Kernels.cmake looks). They are optional: the
# build then embeds the CUDA 13 image only. GPUCHECK_NO_OLD_TOOLKITS=1 skips them.
# `--portable` also installs Zig (the `ziglang` wheel) for the portable release build
# (CMake preset "portable", docs/building.md) and rpm (rpmbuild, for CPack's .rpm; rpm2archive
# for its test).
set -euo pipefail

packages=(cmake g++ make libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev zlib1g-dev
  libtomlplusplus-dev cmark-gfm libxml2-utils tar gzip python3 python3-yaml python3-jsonschema
  python3-prometheus-client python3-pip shellcheck
  binutils man-db)
if [ "${1:-}" = --portable ]; then
  packages+=(rpm)
fi
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

# Older CUDA compilers for the kernel images older drivers load (docs/building.md).
toolchains="${GPUCHECK_TOOLCHAINS_DIR:-${HOME}/.cache/gpucheck/toolchains}"
install_toolkit_wheels() { # DIR PACKAGE==VERSION...
  local dir="$toolchains/$1"
  shift
  if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$*" ]; then
    return 0
  fi
  echo "gpucheck: installing $* into $dir" >&2
  rm -rf "$dir"
  if python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir" "$@"; then
    echo "$*" >"$dir/.complete"
  else
    rm -rf "$dir"
    echo "gpucheck: could not install $*; the build embeds the CUDA 13 kernel image only" >&2
  fi
}
if [ "${1:-}" = --portable ]; then
  install_toolkit_wheels zig ziglang==0.17.1
fi
if [ "${GPUCHECK_NO_OLD_TOOLKITS:-0}" != 1 ]; then
  install_toolkit_wheels cuda-11.8 nvidia-cuda-nvrtc-cu11==11.8.89 nvidia-cuda-nvcc-cu11==11.8.89
  install_toolkit_wheels cuda-12.9 nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-nvcc-cu12==12.9.86
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "gpucheck: no CUDA toolkit found (nvcc); install it from https://developer.nvidia.com/cuda-downloads" >&2
  echo "          or set CUDAToolkit_ROOT=/path/to/cuda" >&2
  exit 1
fi
