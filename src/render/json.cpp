#include "render/json.hpp"

#include <nlohmann/json.hpp>

#include "gpucheck/model/json_io.hpp"
#include "render/utf8.hpp"

namespace gpucheck::render {

namespace {
std::string dump_valid(nlohmann::json j, int indent) {
  // Bytes that are not UTF-8 (an environment value, a path, sysfs text) become visible "\xNN"
  // text; `replace` is the last guard, so that dump never throws.
  make_valid_utf8(j);
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
} // namespace

std::string dump_valid_json(nlohmann::json j) {
  return dump_valid(std::move(j), 2);
}

std::string render_json(const Report& report, bool compact) {
  return dump_valid(report, compact ? -1 : 2);
}

std::string render_snapshot_json(const SystemSnapshot& snapshot) {
  return dump_valid_json(snapshot);
}

} // namespace gpucheck::render
