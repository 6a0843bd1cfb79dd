#include "gpucheck/model/snapshot.hpp"

#include "gpucheck/model/stack_versions.hpp"

namespace gpucheck {

std::string_view to_string(ChildFailureKind kind) {
  switch (kind) {
  case ChildFailureKind::timeout:
    return "timeout";
  case ChildFailureKind::signal:
    return "signal";
  case ChildFailureKind::exit:
    return "exit";
  case ChildFailureKind::bad_output:
    return "bad_output";
  case ChildFailureKind::spawn:
    return "spawn";
  case ChildFailureKind::cancelled:
    return "cancelled";
  }
  return "exit";
}

std::optional<ChildFailureKind> child_failure_kind_from_string(std::string_view text) {
  for (const ChildFailureKind kind : k_child_failure_kinds) {
    if (to_string(kind) == text) {
      return kind;
    }
  }
  return std::nullopt;
}

const LibraryFamily* SystemSnapshot::library(std::string_view family) const {
  for (const LibraryFamily& lib : libraries) {
    if (lib.family == family) {
      return &lib;
    }
  }
  return nullptr;
}

std::optional<std::string> SystemSnapshot::env(const std::string& name) const {
  auto it = environment.variables.find(name);
  if (it == environment.variables.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<std::string> driver_version(const SystemSnapshot& snapshot) {
  return snapshot.kernel_module.version ? snapshot.kernel_module.version
                                        : snapshot.nvml.driver_version;
}

std::optional<int> driver_cuda_version(const SystemSnapshot& snapshot) {
  for (const std::optional<int>& said :
       {snapshot.cuda.driver_version, snapshot.nvml.cuda_driver_version}) {
    if (said && *said > 0) {
      return said;
    }
  }
  return std::nullopt;
}

std::string cuda_version_text(int64_t encoded) {
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
}

} // namespace gpucheck
