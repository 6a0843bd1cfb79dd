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
# The root-safety suite runs gpucheck as root; as another user its cases skip, so it runs again
# through sudo where sudo asks for no password (docs/security.md, "The root-safety suite").
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo -n env PATH="$PATH" ctest --preset ci -R RootSafetySuite --output-on-failure
fi
