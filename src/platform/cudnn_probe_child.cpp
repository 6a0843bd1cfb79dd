// Child side of the cuDNN probe (methods.md §2.3): pin the sub-libraries by absolute path from
// the shim's own directory before calling into the shim, so that a missing piece is reported
// rather than aborting the process, then ask the shim for its versions and version checks.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <span>
#include <string_view>

#include "gpucheck/model/json_io.hpp"
#include "platform/dynlib.hpp"
#include "platform/library_versions.hpp"
#include "platform/probes_child.hpp"

namespace gpucheck::platform {

namespace {

struct SublibrarySpec {
  std::string_view stem;     ///< "graph" -> libcudnn_graph.so.<major>
  const char* version_check; ///< its *VersionCheck function, or nullptr
  bool core;                 ///< the shim cannot work without it
};

// cuDNN 9: graph hosts the core API (a shim without it aborts on every call). Dependency order.
constexpr SublibrarySpec k_cudnn9[] = {
    {"graph", "cudnnGraphVersionCheck", true},
    {"ops", "cudnnOpsVersionCheck", false},
    {"cnn", "cudnnCnnVersionCheck", false},
    {"adv", "cudnnAdvVersionCheck", false},
    {"engines_precompiled", nullptr, false},
    {"engines_runtime_compiled", nullptr, false},
    {"heuristic", nullptr, false},
};
// cuDNN 8: ops_infer hosts cudnnGetVersion; a missing sub-library aborts when it is reached.
constexpr SublibrarySpec k_cudnn8[] = {
    {"ops_infer", "cudnnOpsInferVersionCheck", true},
    {"ops_train", "cudnnOpsTrainVersionCheck", false},
    {"cnn_infer", "cudnnCnnInferVersionCheck", false},
    {"cnn_train", "cudnnCnnTrainVersionCheck", false},
    {"adv_infer", "cudnnAdvInferVersionCheck", false},
    {"adv_train", "cudnnAdvTrainVersionCheck", false},
};

std::string base_name(const std::string& path) {
  return path.substr(path.find_last_of('/') + 1);
}

/// The cuDNN major from a file name such as "libcudnn.so.8" or "libcudnn.so.9.19.0"; 9 if none.
int cudnn_major(const LibraryLoad& load) {
  static constexpr std::string_view k_prefix = "libcudnn.so.";
  for (const std::string* path : {&load.real_path, &load.path, &load.name}) {
    const std::string name = base_name(*path);
    if (name.rfind(k_prefix, 0) == 0 && name.size() > k_prefix.size()) {
      const int major = std::atoi(name.c_str() + k_prefix.size());
      if (major > 0) {
        return major;
      }
    }
  }
  return 9;
}

/// The directory the loader took the shim from ($ORIGIN for its RUNPATH).
std::string shim_directory(const LibraryLoad& load) {
  const std::string& path = !load.path.empty() ? load.path : load.real_path;
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

struct Pinned {
  CudnnSublibrary record;
  void* handle = nullptr;
  const SublibrarySpec* spec = nullptr;
};

Pinned pin(const std::string& directory, int major, const SublibrarySpec& spec) {
  Pinned out;
  out.spec = &spec;
  out.record.name = "libcudnn_" + std::string(spec.stem) + ".so." + std::to_string(major);
  out.record.path = directory + "/" + out.record.name;
  ::dlerror();
  out.handle = ::dlopen(out.record.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (out.handle == nullptr) {
    const char* error = ::dlerror();
    out.record.error = error != nullptr ? error : "dlopen failed";
    return out;
  }
  out.record.loaded = true;
  link_map* map = nullptr;
  if (::dlinfo(out.handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
      map->l_name != nullptr) {
    out.record.path = map->l_name;
  }
  return out;
}

using SizeFn = size_t (*)();
using StatusFn = int (*)();

} // namespace

nlohmann::json child_probe_cudnn(const std::vector<std::string>& all_args) {
  // --shallow (gpucheck --quick): load only the core sub-library; the large ones (hundreds of MB
  // on disk, slow to load) are checked for presence only, and listed only when absent;
  // no sub-library's version check is called.
  const bool shallow = !all_args.empty() && all_args.front() == "--shallow";
  const std::vector<std::string> args(all_args.begin() + (shallow ? 1 : 0), all_args.end());
  DynamicLibrary shim = args.empty()
                            ? DynamicLibrary::open_first({"libcudnn.so.9", "libcudnn.so.8"})
                            : DynamicLibrary::open(args.front());
  CudnnDetails details;
  if (!shim.loaded()) {
    return nlohmann::json{{"load", shim.load()}, {"cudnn", details}};
  }

  const int major = cudnn_major(shim.load());
  const std::string directory = shim_directory(shim.load());
  std::vector<Pinned> pinned;
  bool core_loaded = true;
  for (const SublibrarySpec& spec : major >= 9 ? std::span<const SublibrarySpec>(k_cudnn9)
                                               : std::span<const SublibrarySpec>(k_cudnn8)) {
    if (shallow && !spec.core) {
      const std::string name =
          "libcudnn_" + std::string(spec.stem) + ".so." + std::to_string(major);
      const std::string path = directory + "/" + name;
      if (::access(path.c_str(), F_OK) != 0) {
        Pinned absent;
        absent.spec = &spec;
        absent.record.name = name;
        absent.record.path = path;
        absent.record.error = path + ": no such file";
        pinned.push_back(std::move(absent));
      }
      continue;
    }
    pinned.push_back(pin(directory, major, spec));
    core_loaded = core_loaded && (!spec.core || pinned.back().record.loaded);
  }

  // Without its core sub-library the shim aborts on the first call: report what is known.
  if (core_loaded) {
    if (auto get = shim.function<SizeFn>("cudnnGetVersion")) {
      const auto version = static_cast<int64_t>(get());
      shim.load().version_raw = version;
      shim.load().version = cudnn_version_string(version);
    }
    if (auto get = shim.function<SizeFn>("cudnnGetCudartVersion")) {
      details.cudart_version = static_cast<int64_t>(get());
    }
    // Only late 8.x and 9.x have it: absence is not worth a missing-symbol entry.
    if (auto get = shim.function<SizeFn>("cudnnGetMaxDeviceVersion", false)) {
      details.max_device_version = static_cast<int64_t>(get());
    }
    for (Pinned& entry : pinned) {
      // A missing sub-library's check would abort (8.x) or print noise (9.x): skip it. --quick
      // skips them all: cuDNN 9's cudnnGraphVersionCheck initialises CUDA, the longest part of
      // --quick (docs/performance.md); the standard run makes them.
      if (shallow || entry.spec->version_check == nullptr || !entry.record.loaded) {
        continue;
      }
      auto check = shim.function<StatusFn>(entry.spec->version_check, false);
      if (check == nullptr) {
        check = reinterpret_cast<StatusFn>( // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
            ::dlsym(entry.handle, entry.spec->version_check));
      }
      if (check != nullptr) {
        entry.record.version_check = check();
      }
    }
  }
  for (Pinned& entry : pinned) {
    details.sublibraries.push_back(std::move(entry.record));
  }
  return nlohmann::json{{"load", shim.load()}, {"cudnn", details}};
}

} // namespace gpucheck::platform
