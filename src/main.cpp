// gpucheck: a thin main over the core library.
#include "cli/app.hpp"
#include "platform/child_modes.hpp"
#include "platform/trace.hpp"

int main(int argc, char** argv) {
  if (gpucheck::platform::is_child_invocation(argc, argv)) {
    return gpucheck::platform::run_child_mode(argc, argv);
  }
  gpucheck::platform::trace_start();
  return gpucheck::cli::run_app(argc, argv);
}
