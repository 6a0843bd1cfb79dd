#include "probes/collect.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ctime>

#include "gpucheck/model/json.hpp"
#include "platform/child_process.hpp"

namespace gpucheck::probes {

namespace {

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

/// Decode a child's payload into T, or record why not.
template <typename T>
bool decode(const platform::ChildOutcome& outcome, const char* probe, const char* key, T& into,
            std::vector<ProbeIssue>& issues) {
  if (!outcome.ok()) {
    return false;
  }
  try {
    const nlohmann::json& body = key != nullptr ? outcome.payload->at(key) : *outcome.payload;
    into = body.get<T>();
    return true;
  } catch (const std::exception& e) {
    issues.push_back({probe, fmt::format("child result could not be read: {}", e.what())});
    return false;
  }
}

} // namespace

SystemSnapshot collect_snapshot(const ProbeOptions& options, const Environment& env) {
  const Sysroot root(options.sysroot);
  SystemSnapshot snapshot;
  snapshot.collected_at = utc_now();

  // Children first, so they run while the parent reads local facts.
  std::vector<platform::ChildRequest> requests;
  auto request = [&](std::string mode, std::vector<std::string> args) {
    platform::ChildRequest r;
    r.mode = std::move(mode);
    r.args = std::move(args);
    r.timeout = options.child_timeout;
    requests.push_back(std::move(r));
    return requests.size() - 1;
  };
  const size_t nvml_child = request("nvml", {});
  const size_t cuda_child = request("cuda", {});
  const size_t cudnn_child = request("cudnn", {});
  const size_t cudart_child = request("library", {"cudart", "libcudart.so.13", "libcudart.so.12",
                                                  "libcudart.so.11.0", "libcudart.so"});
  const size_t cublas_child = request("library", {"cublas", "libcublas.so.13", "libcublas.so.12",
                                                  "libcublas.so.11", "libcublas.so"});
  const size_t nccl_child = request("library", {"nccl", "libnccl.so.2", "libnccl.so"});

  // TODO(probes): start children asynchronously and read local facts meanwhile.
  const std::vector<platform::ChildOutcome> outcomes = platform::run_children(requests);

  snapshot.host = probe_host(root);
  snapshot.environment = probe_environment(root, env);
  snapshot.kernel_module = probe_kernel_module(root);
  snapshot.toolkit = probe_toolkit(root, env);
  snapshot.libraries = discover_libraries(root, env);

  std::vector<GpuInfo> nvml_gpus;
  if (decode(outcomes[nvml_child], "nvml", "nvml", snapshot.nvml, snapshot.probe_issues)) {
    decode(outcomes[nvml_child], "nvml", "gpus", nvml_gpus, snapshot.probe_issues);
  } else if (outcomes[nvml_child].failure) {
    snapshot.nvml.failure = outcomes[nvml_child].failure;
  }
  if (!decode(outcomes[cuda_child], "cuda", nullptr, snapshot.cuda, snapshot.probe_issues) &&
      outcomes[cuda_child].failure) {
    snapshot.cuda.failure = outcomes[cuda_child].failure;
  }
  snapshot.gpus = merge_gpus(std::move(nvml_gpus), snapshot.cuda);

  auto family_of = [&](const std::string& name) -> LibraryFamily& {
    for (LibraryFamily& family : snapshot.libraries) {
      if (family.family == name) {
        return family;
      }
    }
    snapshot.libraries.push_back(LibraryFamily{.family = name});
    return snapshot.libraries.back();
  };
  for (const auto& [name, index] : {std::pair<std::string, size_t>{"cudart", cudart_child},
                                    {"cublas", cublas_child},
                                    {"nccl", nccl_child}}) {
    LibraryFamily& family = family_of(name);
    if (!decode(outcomes[index], name.c_str(), nullptr, family.load, snapshot.probe_issues)) {
      family.failure = outcomes[index].failure;
    }
  }
  LibraryFamily& cudnn = family_of("cudnn");
  if (decode(outcomes[cudnn_child], "cudnn", "load", cudnn.load, snapshot.probe_issues)) {
    CudnnDetails details;
    if (decode(outcomes[cudnn_child], "cudnn", "cudnn", details, snapshot.probe_issues)) {
      cudnn.cudnn = details;
    }
  } else {
    cudnn.failure = outcomes[cudnn_child].failure;
  }
  return snapshot;
}

} // namespace gpucheck::probes
