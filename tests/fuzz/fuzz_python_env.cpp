// Python environments read from their files in the parent (src/probes/python_*.cpp): pyvenv.cfg,
// dist-info METADATA and RECORD of frameworks and nvidia wheels, a framework's library (ELF
// RUNPATH), conda-meta's python record and patchlevel.h, each filled from one section of the
// input in a fixture tree that also holds a symlink loop in site-packages. Any bytes: the
// environments are built, and the snapshot holding them is written as JSON and reads back.
#include <unistd.h>

#include <filesystem>

#include "fuzz_support.hpp"
#include "probes/python_envs.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* k_venv_site = "/opt/venv/lib/python3.12/site-packages";
constexpr const char* k_conda_site = "/opt/conda/lib/python3.11/site-packages";

const std::vector<std::string>& fuzzed_files() {
  static const std::vector<std::string> files = {
      "/opt/venv/pyvenv.cfg",
      std::string(k_venv_site) + "/torch-2.5.1.dist-info/METADATA",
      std::string(k_venv_site) + "/torch-2.5.1.dist-info/RECORD",
      std::string(k_venv_site) + "/nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA",
      std::string(k_venv_site) + "/nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD",
      std::string(k_venv_site) + "/torch/lib/libtorch_cuda.so",
      std::string(k_venv_site) + "/tensorflow-2.17.0.dist-info/METADATA",
      "/opt/conda/conda-meta/python-3.11.9-h955ad1f_0.json",
      "/opt/conda/include/python3.11/patchlevel.h",
      std::string(k_conda_site) + "/jax-0.4.30.dist-info/METADATA",
      std::string(k_conda_site) + "/jax_cuda12_plugin-0.4.30.dist-info/METADATA",
  };
  return files;
}

const std::string& tree() {
  static const std::string root = [] {
    const std::string dir = gpucheck::fuzz::scratch_directory() + "/python";
    for (const std::string& file : fuzzed_files()) {
      fs::create_directories(fs::path(dir + file).parent_path());
    }
    for (const char* file :
         {"/opt/venv/bin/python3", "/opt/conda/bin/python3.11", "/usr/bin/python3.12",
          "/usr/lib/python3.12/os.py", "/opt/conda/lib/python3.11/os.py"}) {
      fs::create_directories(fs::path(dir + file).parent_path());
      gpucheck::fuzz::write_file(dir + file, "");
    }
    fs::create_symlink("python3.11", dir + "/opt/conda/bin/python");
    // A loop: site-packages/loop -> . and a link to itself.
    fs::create_directory_symlink(".", dir + k_venv_site + "/loop");
    fs::create_symlink("self.dist-info", dir + k_venv_site + "/self.dist-info");
    return dir;
  }();
  return root;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpucheck;
  const std::string& dir = tree();
  const std::vector<std::string>& files = fuzzed_files();
  const std::vector<std::string_view> parts =
      fuzz::sections(fuzz::as_text(data, size), files.size() + 1);
  for (size_t i = 0; i < files.size(); ++i) {
    fuzz::write_file(dir + files[i], parts[i]);
  }
  const probes::Sysroot root(dir);
  const probes::Environment env({{"PATH", "/opt/venv/bin:/opt/conda/bin:/usr/bin"},
                                 {"VIRTUAL_ENV", "/opt/venv"},
                                 {"CONDA_PREFIX", "/opt/conda"},
                                 {"LD_LIBRARY_PATH", std::string(parts.back())}});
  const std::vector<probes::PythonCandidate> candidates =
      probes::find_python_candidates(root, env, {"/usr/bin/python3.12"});
  const std::vector<std::optional<probes::InterpreterAnswer>> answers(candidates.size());
  const std::vector<std::optional<ChildFailure>> failures(candidates.size());
  SystemSnapshot snapshot; // only what these probes fill: the round trip is of their output
  snapshot.python_environments =
      probes::build_python_environments(root, env, candidates, answers, failures);
  (void)probes::python_lib_dirs(root, env);
  fuzz::check_snapshot_round_trip(snapshot);
  return 0;
}
