#pragma once
// The judge of a check of its own folder (src/gpu_checks/) as the runner calls it, on a child's
// JSON, found through the registry: for the tests of binaries that install the registry.

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_checks/registry.hpp"

namespace gpucheck::test {

inline checks::Judgement registered_judge(std::string_view check_id, const checks::GpuTarget& gpu,
                                          const nlohmann::json& json) {
  for (const gpu_checks::Registration& r : gpu_checks::registered()) {
    if (r.check.info.id == check_id) {
      return r.judge(gpu, json);
    }
  }
  throw std::logic_error(std::string(check_id) + " is not registered");
}

/// The judge of a check over every GPU (gpu.p2p, gpu.nccl) on its child's JSON, as the runner
/// calls it.
inline checks::Judgement registered_span_judge(std::string_view check_id,
                                               const SystemSnapshot& snapshot,
                                               const nlohmann::json& json, bool contended,
                                               std::vector<Metric>& metrics) {
  for (const gpu_checks::Registration& r : gpu_checks::registered()) {
    if (r.check.info.id == check_id && r.span_judge != nullptr) {
      return r.span_judge(snapshot, json, contended, metrics);
    }
  }
  throw std::logic_error(std::string(check_id) + " is not registered over every GPU");
}

} // namespace gpucheck::test
