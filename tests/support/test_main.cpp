// Test main: like gpucheck's own main, it serves `--child MODE` so runner tests can spawn it.
#include <gtest/gtest.h>

#include "child_dispatch/child_modes.hpp"
#include "gpu_checks/registry.hpp"

int main(int argc, char** argv) {
  gpucheck::gpu_checks::install(); // as gpucheck's own main does
  if (gpucheck::children::is_child_invocation(argc, argv)) {
    return gpucheck::children::run_child_mode(argc, argv);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
