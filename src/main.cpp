// gpucheck: a thin main over the core library.
#include "children/child_modes.hpp"
#include "cli/app.hpp"
#include "process/trace.hpp"

int main(int argc, char** argv) {
  if (gpucheck::children::is_child_invocation(argc, argv)) {
    return gpucheck::children::run_child_mode(argc, argv);
  }
  gpucheck::process::trace_start();
  return gpucheck::cli::run_app(argc, argv);
}
