// Test main of every unit binary (tests/CMakeLists.txt). With GPUCHECK_TEST_CHILD_MODES it serves
// `--child MODE` like gpucheck's own main, so tests can spawn it; with GPUCHECK_TEST_INSTALL the
// checks of src/gpu_checks/ join first, as in gpucheck, for tests of the whole catalogue.
#include <gtest/gtest.h>

#ifdef GPUCHECK_TEST_CHILD_MODES
#include "child_dispatch/child_modes.hpp"
#endif
#ifdef GPUCHECK_TEST_INSTALL
#include "gpu_checks/registry.hpp"
#endif

int main(int argc, char** argv) {
#ifdef GPUCHECK_TEST_INSTALL
  gpucheck::gpu_checks::install();
#endif
#ifdef GPUCHECK_TEST_CHILD_MODES
  if (gpucheck::children::is_child_invocation(argc, argv)) {
    return gpucheck::children::run_child_mode(argc, argv);
  }
#endif
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
