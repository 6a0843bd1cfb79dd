// Test main of every unit binary (tests/CMakeLists.txt). With GPUCHECK_TEST_CHILD_MODES it serves
// `--child MODE` like gpucheck's own main, so tests can spawn it; with GPUCHECK_TEST_INSTALL the
// checks of src/gpu_checks/ join first, as in gpucheck, for tests of the whole catalogue.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

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
  if (gpucheck::child_dispatch::is_child_invocation(argc, argv)) {
    return gpucheck::child_dispatch::run_child_mode(argc, argv);
  }
#else
  // Spawned as a child by a test of a binary without CHILD_MODES, running every test again
  // would spawn that child again, without end: refuse instead.
  if (argc >= 2 && std::strcmp(argv[1], "--child") == 0) {
    std::fputs("this unit test binary serves no --child mode (CHILD_MODES, tests/CMakeLists.txt)\n",
               stderr);
    return 126;
  }
#endif
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
