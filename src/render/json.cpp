#include "render/json.hpp"

#include <nlohmann/json.hpp>

#include "gpucheck/model/json.hpp"

namespace gpucheck::render {

std::string render_json(const Report& report) {
  nlohmann::json j = report;
  return j.dump(2) + "\n";
}

std::string render_snapshot_json(const SystemSnapshot& snapshot) {
  nlohmann::json j = snapshot;
  return j.dump(2) + "\n";
}

} // namespace gpucheck::render
