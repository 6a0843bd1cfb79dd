#include "gpucheck/model/snapshot.hpp"

namespace gpucheck {

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
