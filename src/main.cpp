// gpucheck: a thin main over the core library.
#include <csignal>

#include "child_dispatch/child_modes.hpp"
#include "cli/app.hpp"
#include "gpu_checks/registry.hpp"
#include "process/keeper.hpp"
#include "process/trace.hpp"

int main(int argc, char** argv) {
  // Before anything reads a table: the checks of their own folders join the engine, the
  // children, the catalogue and the gates.
  gpucheck::gpu_checks::install();
  if (gpucheck::child_dispatch::is_child_invocation(argc, argv)) {
    return gpucheck::child_dispatch::run_child_mode(argc, argv);
  }
  gpucheck::process::trace_start();
  // Before any thread or child: what gpucheck's children start dies with gpucheck.
  gpucheck::process::start_keeper();
  // A closed pipe or a file-size limit (ulimit -f) makes a write fail with EPIPE or EFBIG, which
  // the outputs report (exit 3), instead of killing gpucheck mid-run with its children.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  const int code = gpucheck::cli::run_app(argc, argv);
  gpucheck::process::trace("exiting");
  return code;
}
