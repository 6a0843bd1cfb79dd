#include "platform/library_versions.hpp"

#include <fmt/format.h>

namespace gpucheck::platform {

std::string nccl_version_string(int64_t version) {
  if (version >= 10000) {
    return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
  }
  return fmt::format("{}.{}.{}", version / 1000, (version % 1000) / 100, version % 100);
}

std::string cudnn_version_string(int64_t version) {
  if (version >= 90000) {
    return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
  }
  return fmt::format("{}.{}.{}", version / 1000, (version % 1000) / 100, version % 100);
}

} // namespace gpucheck::platform
