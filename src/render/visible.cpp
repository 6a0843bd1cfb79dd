#include "render/visible.hpp"

#include <nlohmann/json.hpp>

#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::render {

namespace {
void make_visible(nlohmann::json& j) {
  if (j.is_string()) {
    std::string& text = j.get_ref<std::string&>();
    text = visible_text(text);
  } else if (j.is_object()) {
    nlohmann::json visible = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      make_visible(it.value());
      visible[visible_text(it.key())] = std::move(it.value());
    }
    j = std::move(visible);
  } else if (j.is_array()) {
    for (nlohmann::json& item : j) {
      make_visible(item);
    }
  }
}
} // namespace

Report visible_report(const Report& report) {
  nlohmann::json j = report;
  make_visible(j);
  return j.get<Report>();
}

} // namespace gpucheck::render
