#!/usr/bin/env bash
# Install what is missing, build gpucheck (release), and run it. Extra arguments go to gpucheck.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --preset release -DGPUCHECK_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release -j"$(nproc)"
exec ./build/release/gpucheck "$@"
