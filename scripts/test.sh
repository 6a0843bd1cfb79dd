#!/usr/bin/env bash
# Install what is missing, then configure, build and run the whole test suite (the CI preset:
# warnings are errors). GPU tests (label "gpu") skip with a reason where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
export CTEST_PARALLEL_LEVEL="${CTEST_PARALLEL_LEVEL:-$(nproc)}"
cmake --workflow --preset ci
