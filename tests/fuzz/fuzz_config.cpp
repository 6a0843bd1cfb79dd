// Configuration files (`--config FILE`, src/cli/gate_options.cpp): CLI11's TOML reader, or JSON
// when the file is an object, in the parent, before anything else runs. Any bytes: the options,
// or a CLI11 parse error (exit 2 in the binary), never another exception or a crash; options
// that parse give a gate specification.
#include <CLI/CLI.hpp>

#include <stdexcept>

#include "cli/gate_options.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gpucheck::fuzz::MemoryFile file;
  const std::string& path = file.write(gpucheck::fuzz::as_text(data, size));
  CLI::App app{"fuzz"};
  // A few of the binary's own options beside the gates, of each kind a config sets.
  double timeout = 30.0;
  bool quick = false;
  std::vector<std::string> only;
  std::string level;
  app.add_option("--timeout", timeout);
  app.add_flag("--quick", quick);
  app.add_option("--only", only);
  app.add_option("--level", level);
  gpucheck::cli::GateOptions options;
  gpucheck::cli::add_gate_options(app, options);
  try {
    app.parse("--config " + path, false);
  } catch (const CLI::ParseError&) {
    return 0; // a usage error naming the file: what the binary prints before exiting 2
  }
  try {
    (void)gpucheck::cli::gate_spec(options);
  } catch (const std::invalid_argument&) {
    // an empty value, which CLI11 does not validate: a usage error in the binary (command_run)
  }
  return 0;
}
