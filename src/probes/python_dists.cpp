// Installed distributions, from their metadata only: *.dist-info/METADATA (or *.egg-info/PKG-INFO,
// or an *.egg-info file) for name and version, RECORD for the shared libraries an nvidia-* wheel
// carries. Nothing is imported.
#include <cctype>

#include "probes/paths.hpp"
#include "probes/python_envs.hpp"

namespace gpucheck::probes {

namespace {

/// Whether a distribution matters to the framework checks.
bool relevant(const std::string& name) {
  static const char* const k_names[] = {
      "torch",          "torchvision", "torchaudio", "tensorflow", "tensorflow-cpu",
      "tensorflow-gpu", "tf-nightly",  "jax",        "jaxlib",     "intel-tensorflow"};
  for (const char* known : k_names) {
    if (name == known) {
      return true;
    }
  }
  // ONNX Runtime (onnxruntime, onnxruntime-gpu), TensorRT (tensorrt, tensorrt-cu12,
  // tensorrt-cu12-libs, tensorrt-libs) and CuPy (cupy-cuda12x, cupy-cuda113, ...).
  return name.starts_with("nvidia-") || name.starts_with("jax-cuda") || name == "onnxruntime" ||
         name == "onnxruntime-gpu" || name.starts_with("tensorrt") || name.starts_with("cupy-cuda");
}

/// "Name:" / "Version:" headers of a METADATA or PKG-INFO text (the header block only).
std::pair<std::string, std::string> read_headers(const std::string& text) {
  std::string name;
  std::string version;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.empty()) {
      break; // the body (long description) follows
    }
    if (line.starts_with("Name:")) {
      name = line.substr(5);
    } else if (line.starts_with("Version:")) {
      version = line.substr(8);
    }
  }
  // One erase of the leading blanks: erasing them one by one was quadratic (a 1 MB run of
  // spaces took 16 s).
  auto trim = [](std::string& s) {
    const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    size_t first = 0;
    while (first < s.size() && blank(s[first])) {
      ++first;
    }
    s.erase(0, first);
    while (!s.empty() && blank(s.back())) {
      s.pop_back();
    }
  };
  trim(name);
  trim(version);
  return {name, version};
}

bool is_shared_library(std::string_view file) {
  const std::string name = base_name(file);
  const size_t so = name.find(".so");
  return so != std::string::npos && (so + 3 == name.size() || name[so + 3] == '.');
}

/// Shared libraries listed in a RECORD ("path,hash,size" lines), site-packages relative.
std::vector<std::string> record_libraries(const std::string& record) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < record.size()) {
    const size_t end = std::min(record.find('\n', start), record.size());
    const std::string line = record.substr(start, end - start);
    start = end + 1;
    const std::string path = line.substr(0, line.find(','));
    if (!path.starts_with("../") && !path.starts_with('/') && is_shared_library(path)) {
      out.push_back(path);
    }
  }
  return out;
}

} // namespace

std::string normalize_dist_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == '_' || c == '.' || c == '-') {
      if (!out.empty() && out.back() != '-') {
        out.push_back('-');
      }
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

std::vector<PythonDistribution> read_distributions(const Sysroot& root,
                                                   const std::vector<std::string>& site_packages) {
  std::vector<PythonDistribution> out;
  for (const std::string& site : site_packages) {
    for (const std::string& entry : list_resolved(root, site)) {
      const bool dist_info = entry.ends_with(".dist-info");
      const bool egg_info = entry.ends_with(".egg-info");
      if (!dist_info && !egg_info) {
        continue;
      }
      // The directory name is "<name>-<version>.dist-info": filter cheaply before reading.
      const std::string stem = entry.substr(0, entry.rfind('.'));
      const std::string guessed = normalize_dist_name(stem.substr(0, stem.find('-')));
      if (!relevant(guessed)) {
        continue;
      }
      const std::string dir = join_path(site, entry);
      std::optional<std::string> metadata;
      if (dist_info) {
        metadata = read_resolved(root, join_path(dir, "METADATA"));
      } else {
        metadata = root.is_directory(dir) ? read_resolved(root, join_path(dir, "PKG-INFO"))
                                          : read_resolved(root, dir);
      }
      PythonDistribution dist;
      dist.metadata_dir = dir;
      if (metadata) {
        auto [name, version] = read_headers(*metadata);
        dist.name = normalize_dist_name(name);
        dist.version = version;
      }
      if (dist.name.empty()) {
        // No readable metadata: the directory name still says what it is.
        dist.name = guessed;
        const size_t dash = stem.find('-');
        dist.version = dash == std::string::npos ? "" : stem.substr(dash + 1);
      }
      if (!relevant(dist.name)) {
        continue;
      }
      if (dist.name.starts_with("nvidia-") || dist.name.starts_with("jax-cuda")) {
        if (const std::optional<std::string> record =
                read_resolved(root, join_path(dir, "RECORD"))) {
          dist.libraries = record_libraries(*record);
        }
      }
      out.push_back(std::move(dist));
    }
  }
  return out;
}

} // namespace gpucheck::probes
