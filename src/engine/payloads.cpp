#include "engine/payloads.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpucheck::engine {

namespace {
/// Read `key` of `object` into `into`; an error names the path.
template <typename T>
std::optional<Error> field(const nlohmann::json& object, const char* key, T& into,
                           const std::string& where) {
  if (!object.contains(key)) {
    return make_error(fmt::format("{}.{} is missing", where, key));
  }
  const nlohmann::json& value = object[key];
  if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) {
      return make_error(fmt::format("{}.{} is not a string", where, key));
    }
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (!value.is_number_unsigned()) {
      return make_error(fmt::format("{}.{} is not a count", where, key));
    }
  } else {
    if (!value.is_number()) {
      return make_error(fmt::format("{}.{} is not a number", where, key));
    }
  }
  into = value.get<T>();
  return std::nullopt;
}
} // namespace

nlohmann::json to_json(const PayloadMetric& metric) {
  return {
      {"name", metric.name}, {"value", metric.value}, {"unit", metric.unit}, {"note", metric.note}};
}

nlohmann::json to_json(const PayloadVerification& v) {
  return {{"kind", v.kind},
          {"what", v.what},
          {"checked", v.checked},
          {"mismatches", v.mismatches},
          {"first_index", v.first_index},
          {"got", v.got},
          {"want", v.want}};
}

nlohmann::json to_json(const PayloadFailure& f) {
  return {{"stage", f.stage}, {"call", f.call}, {"code", f.code},
          {"name", f.name},   {"text", f.text}, {"message", f.message}};
}

void write_envelope(const ChildEnvelope& envelope, nlohmann::json& out) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const PayloadMetric& m : envelope.metrics) {
    metrics.push_back(to_json(m));
  }
  nlohmann::json verify = nlohmann::json::array();
  for (const PayloadVerification& v : envelope.verify) {
    verify.push_back(to_json(v));
  }
  out["metrics"] = std::move(metrics);
  out["verify"] = std::move(verify);
  if (envelope.failure) {
    out["failure"] = to_json(*envelope.failure);
  } else {
    out.erase("failure");
  }
}

Expected<ChildEnvelope> read_envelope(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  ChildEnvelope envelope;
  for (const char* list : {"metrics", "verify"}) {
    if (!payload.contains(list) || !payload[list].is_array()) {
      return make_error(fmt::format("{} is missing or not a list", list));
    }
  }
  size_t i = 0;
  for (const nlohmann::json& m : payload["metrics"]) {
    const std::string where = fmt::format("metrics[{}]", i++);
    if (!m.is_object()) {
      return make_error(where + " is not an object");
    }
    PayloadMetric metric;
    for (const auto& error :
         {field(m, "name", metric.name, where), field(m, "value", metric.value, where),
          field(m, "unit", metric.unit, where), field(m, "note", metric.note, where)}) {
      if (error) {
        return *error;
      }
    }
    envelope.metrics.push_back(std::move(metric));
  }
  i = 0;
  for (const nlohmann::json& v : payload["verify"]) {
    const std::string where = fmt::format("verify[{}]", i++);
    if (!v.is_object()) {
      return make_error(where + " is not an object");
    }
    PayloadVerification verification;
    for (const auto& error :
         {field(v, "kind", verification.kind, where), field(v, "what", verification.what, where),
          field(v, "checked", verification.checked, where),
          field(v, "mismatches", verification.mismatches, where),
          field(v, "first_index", verification.first_index, where),
          field(v, "got", verification.got, where), field(v, "want", verification.want, where)}) {
      if (error) {
        return *error;
      }
    }
    envelope.verify.push_back(std::move(verification));
  }
  if (payload.contains("failure")) {
    const nlohmann::json& f = payload["failure"];
    if (!f.is_object()) {
      return make_error("failure is not an object");
    }
    PayloadFailure failure;
    // A failure always names its stage and message; the driver call, its code and names only
    // when a call failed.
    for (const auto& error : {field(f, "stage", failure.stage, "failure"),
                              field(f, "message", failure.message, "failure")}) {
      if (error) {
        return *error;
      }
    }
    if (f.contains("call")) {
      for (const auto& error :
           {field(f, "call", failure.call, "failure"), field(f, "code", failure.code, "failure"),
            field(f, "name", failure.name, "failure"), field(f, "text", failure.text, "failure")}) {
        if (error) {
          return *error;
        }
      }
    }
    envelope.failure = std::move(failure);
  }
  return envelope;
}

} // namespace gpucheck::engine
