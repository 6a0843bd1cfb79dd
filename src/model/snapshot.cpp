#include "gpucheck/model/snapshot.hpp"

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

} // namespace gpucheck
