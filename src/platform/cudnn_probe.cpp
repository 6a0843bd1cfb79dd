// STUB: to be replaced by the real child probe.
#include <nlohmann/json.hpp>

#include "platform/probes_child.hpp"

namespace gpucheck::platform {
nlohmann::json child_probe_cudnn(const std::vector<std::string>&) {
  return nlohmann::json::object();
}
} // namespace gpucheck::platform
