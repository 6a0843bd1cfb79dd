#include "protocol/payloads.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace gpucheck::protocol {

namespace {
using Json = nlohmann::json;
using Problem = std::optional<Error>;

// Read one JSON value into a typed field; an error names `path`, the value's place in the
// payload ("convolutions[2].found.ms"). Scalars first, then lists, maps and optionals of them;
// the payload's structs have overloads of their own below.
Problem read_value(const Json& value, const std::string& path, std::string& into) {
  if (!value.is_string()) {
    return make_error(path + " is not a string");
  }
  into = value.get<std::string>();
  return std::nullopt;
}

Problem read_value(const Json& value, const std::string& path, uint64_t& into) {
  if (!value.is_number_unsigned()) {
    return make_error(path + " is not a count");
  }
  into = value.get<uint64_t>();
  return std::nullopt;
}

Problem read_value(const Json& value, const std::string& path, int64_t& into) {
  if (!value.is_number_integer()) {
    return make_error(path + " is not an integer");
  }
  into = value.get<int64_t>();
  return std::nullopt;
}

Problem read_value(const Json& value, const std::string& path, int& into) {
  if (!value.is_number_integer()) {
    return make_error(path + " is not an integer");
  }
  const int64_t wide = value.get<int64_t>();
  if (wide < INT32_MIN || wide > INT32_MAX) {
    return make_error(path + " is out of range");
  }
  into = static_cast<int>(wide);
  return std::nullopt;
}

Problem read_value(const Json& value, const std::string& path, double& into) {
  if (!value.is_number()) {
    return make_error(path + " is not a number");
  }
  into = value.get<double>();
  return std::nullopt;
}

Problem read_value(const Json& value, const std::string& path, bool& into) {
  if (!value.is_boolean()) {
    return make_error(path + " is not true or false");
  }
  into = value.get<bool>();
  return std::nullopt;
}

// The payload's structs, read by overloads further down (declared here so that the templates
// below find them).
Problem read_value(const Json& v, const std::string& path, PayloadMetric& into);
Problem read_value(const Json& v, const std::string& path, PayloadVerification& into);
Problem read_value(const Json& f, const std::string& path, PayloadFailure& into);
Problem read_value(const Json& v, const std::string& path, DeviceDescription& into);
Problem read_value(const Json& v, const std::string& path, KernelLoadAttempt& into);
Problem read_value(const Json& v, const std::string& path, KernelModuleReport& into);
Problem read_value(const Json& v, const std::string& path, CudnnLibrary& into);
Problem read_value(const Json& v, const std::string& path, ConvAlgoTiming& into);
Problem read_value(const Json& v, const std::string& path, ConvGraphScreened& into);
Problem read_value(const Json& v, const std::string& path, ConvGraphError& into);
Problem read_value(const Json& v, const std::string& path, ConvGraph& into);
Problem read_value(const Json& v, const std::string& path, ConvBest& into);
Problem read_value(const Json& v, const std::string& path, ConvRecord& into);
Problem read_value(const Json& v, const std::string& path, CudnnDeterminism& into);
Problem read_value(const Json& v, const std::string& path, CudnnFailure& into);
Problem read_value(const Json& v, const std::string& path, PcieLinkReading& into);
Problem read_value(const Json& v, const std::string& path, NumaPlacement& into);
Problem read_value(const Json& v, const std::string& path, CopySizes& into);
Problem read_value(const Json& v, const std::string& path, BidirectionalCounts& into);
Problem read_value(const Json& v, const std::string& path, TogetherDirection& into);
Problem read_value(const Json& v, const std::string& path, ListedDevice& into);
Problem read_value(const Json& v, const std::string& path, PeerDevice& into);
Problem read_value(const Json& v, const std::string& path, PeerAccess& into);
Problem read_value(const Json& v, const std::string& path, PeerPair& into);
Problem read_value(const Json& v, const std::string& path, PeerSweepPoint& into);
Problem read_value(const Json& v, const std::string& path, NcclSize& into);
Problem read_value(const Json& v, const std::string& path, MemtestPattern& into);
Problem read_value(const Json& v, const std::string& path, MemtestError& into);
Problem read_value(const Json& v, const std::string& path, BurnMismatch& into);
Problem read_value(const Json& v, const std::string& path, BurnType& into);
Problem read_value(const Json& v, const std::string& path, BurnWatch& into);
Problem read_value(const Json& v, const std::string& path, BurnXid& into);

template <typename T>
Problem read_value(const Json& value, const std::string& path, std::vector<T>& into) {
  if (!value.is_array()) {
    return make_error(path + " is not a list");
  }
  into.clear();
  for (size_t i = 0; i < value.size(); ++i) {
    T item{};
    if (Problem p = read_value(value[i], fmt::format("{}[{}]", path, i), item)) {
      return p;
    }
    into.push_back(std::move(item));
  }
  return std::nullopt;
}

template <typename T>
Problem read_value(const Json& value, const std::string& path, std::map<std::string, T>& into) {
  if (!value.is_object()) {
    return make_error(path + " is not an object");
  }
  into.clear();
  for (const auto& [key, item] : value.items()) {
    if (Problem p = read_value(item, path + "." + key, into[key])) {
      return p;
    }
  }
  return std::nullopt;
}

/// A key that must be there.
template <typename T>
Problem field(const Json& object, const char* key, T& into, const std::string& where) {
  const std::string path = where.empty() ? std::string(key) : where + "." + key;
  if (!object.contains(key)) {
    return make_error(path + " is missing");
  }
  return read_value(object[key], path, into);
}

/// A key that may be absent (nullopt then), but is of the right type when there.
template <typename T>
Problem optional_field(const Json& object, const char* key, std::optional<T>& into,
                       const std::string& where) {
  into.reset();
  if (!object.contains(key)) {
    return std::nullopt;
  }
  T value{};
  if (Problem p = field(object, key, value, where)) {
    return p;
  }
  into = std::move(value);
  return std::nullopt;
}

/// The first error of a list of reads (each already done).
Problem first(std::initializer_list<Problem> problems) {
  for (const Problem& p : problems) {
    if (p) {
      return p;
    }
  }
  return std::nullopt;
}

Problem must_be_object(const Json& value, const std::string& path) {
  if (!value.is_object()) {
    return make_error(path + " is not an object");
  }
  return std::nullopt;
}

// Reads evaluate left to right inside a braced list, so `first({...})` reports the first bad
// key of each struct in declaration order.

Problem read_value(const Json& v, const std::string& path, PayloadMetric& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "name", into.name, path), field(v, "value", into.value, path),
                field(v, "unit", into.unit, path), field(v, "note", into.note, path)});
}

Problem read_value(const Json& v, const std::string& path, PayloadVerification& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "kind", into.kind, path), field(v, "what", into.what, path),
                field(v, "checked", into.checked, path),
                field(v, "mismatches", into.mismatches, path),
                field(v, "first_index", into.first_index, path), field(v, "got", into.got, path),
                field(v, "want", into.want, path)});
}

Problem read_value(const Json& f, const std::string& path, PayloadFailure& into) {
  if (Problem p = must_be_object(f, path)) {
    return p;
  }
  // A failure always names its stage and message; the driver call, its code and names only
  // when a call failed.
  if (Problem p =
          first({field(f, "stage", into.stage, path), field(f, "message", into.message, path)})) {
    return p;
  }
  if (!f.contains("call")) {
    return std::nullopt;
  }
  return first({field(f, "call", into.call, path), field(f, "code", into.code, path),
                field(f, "name", into.name, path), field(f, "text", into.text, path)});
}

Problem read_value(const Json& v, const std::string& path, DeviceDescription& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  std::string cc;
  if (Problem p = first({field(v, "ordinal", into.ordinal, path), field(v, "name", into.name, path),
                         field(v, "cc", cc, path), field(v, "sm_count", into.sm_count, path),
                         field(v, "pci_bus_id", into.pci_bus_id, path),
                         field(v, "free_bytes", into.free_bytes, path),
                         field(v, "budget_bytes", into.budget_bytes, path),
                         field(v, "driver", into.driver, path),
                         field(v, "connections", into.connections, path),
                         field(v, "prepare_used_bytes", into.prepare_used_bytes, path)})) {
    return p;
  }
  char end = 0;
  if (std::sscanf(cc.c_str(), "%d.%d%c", &into.cc_major, &into.cc_minor, &end) != 2) {
    return make_error(fmt::format("{}.cc is not MAJOR.MINOR: \"{}\"", path, cc));
  }
  return std::nullopt;
}

Problem read_value(const Json& v, const std::string& path, KernelLoadAttempt& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "image", into.image, path), field(v, "route", into.route, path),
                field(v, "code", into.code, path), field(v, "name", into.name, path)});
}

Problem read_value(const Json& v, const std::string& path, KernelModuleReport& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  if (Problem p = first(
          {field(v, "loaded", into.loaded, path), field(v, "image_name", into.image_name, path),
           field(v, "toolkit", into.toolkit, path), field(v, "image_bytes", into.image_bytes, path),
           field(v, "image", into.image, path), field(v, "route", into.route, path),
           field(v, "reason", into.reason, path), field(v, "fallback", into.fallback, path),
           field(v, "attempts", into.attempts, path), field(v, "call", into.call, path),
           field(v, "code", into.code, path), field(v, "name", into.name, path),
           field(v, "text", into.text, path), optional_field(v, "load_ms", into.load_ms, path)})) {
    return p;
  }
  into.error_log.clear();
  into.info_log.clear();
  if (!into.load_ms) {
    return std::nullopt;
  }
  return first(
      {field(v, "error_log", into.error_log, path), field(v, "info_log", into.info_log, path)});
}

Problem read_value(const Json& v, const std::string& path, CudnnLibrary& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  if (Problem p = first({field(v, "path", into.path, path), field(v, "version", into.version, path),
                         field(v, "cudart", into.cudart, path),
                         field(v, "graph_api", into.graph_api, path)})) {
    return p;
  }
  into.graph_api_missing.clear();
  return into.graph_api ? std::nullopt
                        : field(v, "graph_api_missing", into.graph_api_missing, path);
}

Problem read_value(const Json& v, const std::string& path, ConvAlgoTiming& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "algo", into.algo, path), optional_field(v, "ms", into.ms, path),
                optional_field(v, "tflops", into.tflops, path)});
}

Problem read_value(const Json& v, const std::string& path, ConvGraphScreened& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "config", into.config, path), field(v, "mode", into.mode, path),
                field(v, "rank", into.rank, path), field(v, "screen_ms", into.screen_ms, path)});
}

Problem read_value(const Json& v, const std::string& path, ConvGraphError& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "call", into.call, path), field(v, "status", into.status, path),
                field(v, "name", into.name, path)});
}

Problem read_value(const Json& v, const std::string& path, ConvGraph& into) {
  if (Problem p = first({must_be_object(v, path), field(v, "available", into.available, path),
                         optional_field(v, "error", into.error, path)})) {
    return p;
  }
  // The screening's keys come together, written once the configs were tried ("offered" first);
  // the best config's once one was timed ("ms").
  into.screening.reset();
  if (v.contains("offered")) {
    ConvGraphScreening& s = into.screening.emplace();
    if (Problem p = first({field(v, "offered", s.offered, path), field(v, "tried", s.tried, path),
                           field(v, "refused", s.refused, path),
                           field(v, "workspace_too_large", s.workspace_too_large, path),
                           field(v, "failed", s.failed, path),
                           field(v, "skipped_statuses", s.skipped_statuses, path),
                           field(v, "screened", s.screened, path)})) {
      return p;
    }
  }
  into.best.reset();
  if (v.contains("ms")) {
    ConvGraphBest& b = into.best.emplace();
    return first({field(v, "engine", b.engine, path), field(v, "knobs", b.knobs, path),
                  field(v, "numerical_notes", b.numerical_notes, path),
                  field(v, "mode", b.mode, path), field(v, "rank", b.rank, path),
                  field(v, "ms", b.ms, path), field(v, "tflops", b.tflops, path)});
  }
  return std::nullopt;
}

Problem read_value(const Json& v, const std::string& path, ConvBest& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "api", into.api, path), field(v, "what", into.what, path),
                field(v, "ms", into.ms, path), field(v, "tflops", into.tflops, path)});
}

Problem read_value(const Json& v, const std::string& path, ConvRecord& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "label", into.label, path), field(v, "shape", into.shape, path),
                field(v, "gflop", into.gflop, path), field(v, "heuristic", into.heuristic, path),
                optional_field(v, "found", into.found, path),
                optional_field(v, "graph", into.graph, path),
                optional_field(v, "best", into.best, path)});
}

Problem read_value(const Json& v, const std::string& path, CudnnDeterminism& into) {
  if (Problem p = first({must_be_object(v, path), field(v, "label", into.label, path),
                         field(v, "algo", into.algo, path), field(v, "hashes", into.hashes, path),
                         field(v, "equal", into.equal, path)})) {
    return p;
  }
  if (into.hashes.size() != 2) {
    return make_error(path + ".hashes is not two hashes");
  }
  return std::nullopt;
}

Problem read_value(const Json& v, const std::string& path, CudnnFailure& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "call", into.call, path), field(v, "status", into.status, path),
                field(v, "name", into.name, path), field(v, "detail", into.detail, path),
                field(v, "stage", into.stage, path)});
}

Json to_json(const ConvAlgoTiming& t) {
  Json out = {{"algo", t.algo}};
  if (t.ms) {
    out["ms"] = *t.ms;
  }
  if (t.tflops) {
    out["tflops"] = *t.tflops;
  }
  return out;
}

Json to_json(const ConvGraphScreened& s) {
  return {{"config", s.config}, {"mode", s.mode}, {"rank", s.rank}, {"screen_ms", s.screen_ms}};
}

template <typename T> Json list_json(const std::vector<T>& items) {
  Json list = Json::array();
  for (const T& item : items) {
    list.push_back(to_json(item));
  }
  return list;
}

Json to_json(const ConvGraph& g) {
  Json out = {{"available", g.available}};
  if (g.screening) {
    const ConvGraphScreening& s = *g.screening;
    out["offered"] = s.offered;
    out["tried"] = s.tried;
    out["refused"] = s.refused;
    out["workspace_too_large"] = s.workspace_too_large;
    out["failed"] = s.failed;
    out["skipped_statuses"] = s.skipped_statuses;
    out["screened"] = list_json(s.screened);
  }
  if (g.best) {
    const ConvGraphBest& b = *g.best;
    out["engine"] = b.engine;
    out["knobs"] = b.knobs;
    out["numerical_notes"] = b.numerical_notes;
    out["mode"] = b.mode;
    out["rank"] = b.rank;
    out["ms"] = b.ms;
    out["tflops"] = b.tflops;
  }
  if (g.error) {
    out["error"] = {{"call", g.error->call}, {"status", g.error->status}, {"name", g.error->name}};
  }
  return out;
}

/// Read the payload's `key` as a T when it is there.
template <typename T>
Expected<std::optional<T>> read_optional(const Json& payload, const char* key) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  std::optional<T> value;
  if (Problem p = optional_field(payload, key, value, "")) {
    return *p;
  }
  return value;
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
  if (Problem p = first({field(payload, "metrics", envelope.metrics, ""),
                         field(payload, "verify", envelope.verify, ""),
                         optional_field(payload, "failure", envelope.failure, "")})) {
    return *p;
  }
  return envelope;
}

nlohmann::json to_json(const DeviceDescription& d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"cc", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
          {"sm_count", d.sm_count},
          {"pci_bus_id", d.pci_bus_id},
          {"free_bytes", d.free_bytes},
          {"budget_bytes", d.budget_bytes},
          {"driver", d.driver},
          {"connections", d.connections},
          {"prepare_used_bytes", d.prepare_used_bytes}};
}

nlohmann::json to_json(const KernelModuleReport& m) {
  nlohmann::json attempts = nlohmann::json::array();
  for (const KernelLoadAttempt& a : m.attempts) {
    attempts.push_back(
        {{"image", a.image}, {"route", a.route}, {"code", a.code}, {"name", a.name}});
  }
  nlohmann::json out = {{"loaded", m.loaded},
                        {"image_name", m.image_name},
                        {"toolkit", m.toolkit},
                        {"image_bytes", m.image_bytes},
                        {"image", m.image},
                        {"route", m.route},
                        {"reason", m.reason},
                        {"fallback", m.fallback},
                        {"attempts", std::move(attempts)},
                        {"call", m.call},
                        {"code", m.code},
                        {"name", m.name},
                        {"text", m.text}};
  if (m.load_ms) {
    out["load_ms"] = *m.load_ms;
    out["error_log"] = m.error_log;
    out["info_log"] = m.info_log;
  }
  return out;
}

Expected<std::optional<DeviceDescription>> read_device(const nlohmann::json& payload) {
  return read_optional<DeviceDescription>(payload, "device");
}

Expected<std::optional<KernelModuleReport>> read_kernel_module(const nlohmann::json& payload) {
  return read_optional<KernelModuleReport>(payload, "module");
}

namespace {
template <typename T> void put_if(Json& out, const char* key, const std::optional<T>& value) {
  if (value) {
    out[key] = *value;
  }
}
} // namespace

nlohmann::json to_json(const PcieLinkReading& link) {
  Json out = Json::object();
  put_if(out, "current_link_speed", link.current_link_speed);
  put_if(out, "current_link_width", link.current_link_width);
  put_if(out, "max_link_speed", link.max_link_speed);
  put_if(out, "max_link_width", link.max_link_width);
  return out;
}

nlohmann::json to_json(const NumaPlacement& numa) {
  return {{"numa_node", numa.numa_node}, {"local_cpus", numa.local_cpus}, {"pinned", numa.pinned}};
}

nlohmann::json to_json(const CopySizes& sizes) {
  return {{"host_copy_bytes", sizes.host_copy_bytes},
          {"d2d_bytes", sizes.d2d_bytes},
          {"pageable_bytes", sizes.pageable_bytes}};
}

nlohmann::json to_json(const BidirectionalCounts& counts) {
  return {{"copies", counts.copies}, {"extra", counts.extra}, {"uncovered", counts.uncovered}};
}

namespace {
Problem read_value(const Json& v, const std::string& path, PcieLinkReading& into) {
  if (!v.is_object()) {
    return make_error(path + " is not an object");
  }
  return first({optional_field(v, "current_link_speed", into.current_link_speed, path),
                optional_field(v, "current_link_width", into.current_link_width, path),
                optional_field(v, "max_link_speed", into.max_link_speed, path),
                optional_field(v, "max_link_width", into.max_link_width, path)});
}

Problem read_value(const Json& v, const std::string& path, NumaPlacement& into) {
  if (!v.is_object()) {
    return make_error(path + " is not an object");
  }
  return first({field(v, "numa_node", into.numa_node, path),
                field(v, "local_cpus", into.local_cpus, path),
                field(v, "pinned", into.pinned, path)});
}

Problem read_value(const Json& v, const std::string& path, CopySizes& into) {
  if (!v.is_object()) {
    return make_error(path + " is not an object");
  }
  return first({field(v, "host_copy_bytes", into.host_copy_bytes, path),
                field(v, "d2d_bytes", into.d2d_bytes, path),
                field(v, "pageable_bytes", into.pageable_bytes, path)});
}

Problem read_value(const Json& v, const std::string& path, BidirectionalCounts& into) {
  if (!v.is_object()) {
    return make_error(path + " is not an object");
  }
  return first({field(v, "copies", into.copies, path), field(v, "extra", into.extra, path),
                field(v, "uncovered", into.uncovered, path)});
}

Problem read_value(const Json& v, const std::string& path, TogetherDirection& into) {
  if (!v.is_object()) {
    return make_error(path + " is not an object");
  }
  return first({field(v, "gbps", into.gbps, path), field(v, "opened_ns", into.opened_ns, path),
                field(v, "over_ns", into.over_ns, path), field(v, "copies", into.copies, path)});
}
} // namespace

void write_bandwidth(const BandwidthPayload& bandwidth, nlohmann::json& out) {
  if (bandwidth.numa) {
    out["numa"] = to_json(*bandwidth.numa);
  }
  if (bandwidth.sizes) {
    out["sizes"] = to_json(*bandwidth.sizes);
  }
  if (bandwidth.link) {
    out["link"] = to_json(*bandwidth.link);
  }
  if (bandwidth.bidirectional) {
    out["bidirectional"] = to_json(*bandwidth.bidirectional);
  }
  put_if(out, "gate_timeouts", bandwidth.gate_timeouts);
  put_if(out, "gated", bandwidth.gated);
}

Expected<BandwidthPayload> read_bandwidth(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  BandwidthPayload bandwidth;
  if (Problem p = first({optional_field(payload, "numa", bandwidth.numa, ""),
                         optional_field(payload, "sizes", bandwidth.sizes, ""),
                         optional_field(payload, "link", bandwidth.link, ""),
                         optional_field(payload, "bidirectional", bandwidth.bidirectional, ""),
                         optional_field(payload, "gate_timeouts", bandwidth.gate_timeouts, ""),
                         optional_field(payload, "gated", bandwidth.gated, "")})) {
    return *p;
  }
  return bandwidth;
}

std::optional<Error> fold_local_copies(nlohmann::json& bandwidth, const nlohmann::json& local) {
  const Expected<ChildEnvelope> envelope = read_envelope(local);
  if (!envelope) {
    return envelope.error();
  }
  const Expected<BandwidthPayload> own = read_bandwidth(local);
  if (!own) {
    return own.error();
  }
  const Expected<ChildEnvelope> host = read_envelope(bandwidth);
  const Expected<BandwidthPayload> host_own = read_bandwidth(bandwidth);
  if (!host || !host_own) {
    return make_error("the host copies' result is unreadable");
  }
  ChildEnvelope merged = host.value();
  for (const PayloadMetric& m : envelope.value().metrics) {
    const auto same = std::find_if(merged.metrics.begin(), merged.metrics.end(),
                                   [&m](const PayloadMetric& k) { return k.name == m.name; });
    if (same == merged.metrics.end()) {
      merged.metrics.push_back(m);
    } else {
      same->value = std::max(same->value, m.value);
    }
  }
  merged.verify.insert(merged.verify.end(), envelope.value().verify.begin(),
                       envelope.value().verify.end());
  if (!merged.failure) {
    merged.failure = envelope.value().failure;
  }
  BandwidthPayload fields = host_own.value();
  if (own.value().sizes) {
    CopySizes sizes = fields.sizes.value_or(CopySizes{});
    sizes.d2d_bytes = own.value().sizes->d2d_bytes;
    fields.sizes = sizes;
  }
  if (own.value().gate_timeouts) {
    fields.gate_timeouts = fields.gate_timeouts.value_or(0) + *own.value().gate_timeouts;
  }
  if (own.value().gated) {
    fields.gated = fields.gated.value_or(true) && *own.value().gated;
  }
  write_envelope(merged, bandwidth);
  write_bandwidth(fields, bandwidth);
  return std::nullopt;
}

void write_copies_together(const CopiesTogetherPayload& together, nlohmann::json& out) {
  const auto direction = [](const TogetherDirection& d) {
    return Json{
        {"gbps", d.gbps}, {"opened_ns", d.opened_ns}, {"over_ns", d.over_ns}, {"copies", d.copies}};
  };
  out["together"] = {{"h2d", direction(together.h2d)},
                     {"d2h", direction(together.d2h)},
                     {"bytes", together.bytes}};
  out["gate_timeouts"] = together.gate_timeouts;
}

Expected<std::optional<CopiesTogetherPayload>> read_copies_together(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  if (!payload.contains("together")) {
    return std::optional<CopiesTogetherPayload>();
  }
  CopiesTogetherPayload together;
  const Json& t = payload["together"];
  if (!t.is_object()) {
    return make_error("together is not an object");
  }
  if (Problem p = first({field(t, "h2d", together.h2d, "together"),
                         field(t, "d2h", together.d2h, "together"),
                         field(t, "bytes", together.bytes, "together"),
                         field(payload, "gate_timeouts", together.gate_timeouts, "")})) {
    return *p;
  }
  return std::optional<CopiesTogetherPayload>(std::move(together));
}

void write_work_line(const WorkLine& line, nlohmann::json& out) {
  out["work"] = line.work;
  put_if(out, "not_run", line.not_run);
  put_if(out, "lane", line.lane);
}

nlohmann::json work_part(std::string_view work) {
  nlohmann::json part = {{"metrics", nlohmann::json::array()}, {"verify", nlohmann::json::array()}};
  write_work_line({std::string(work), std::nullopt}, part);
  return part;
}

std::string work_list_arg(const std::vector<std::string>& works) {
  std::string arg;
  for (const std::string& work : works) {
    arg += (arg.empty() ? "" : ",") + work;
  }
  return arg;
}

std::vector<std::string> read_work_list(std::string_view arg) {
  std::vector<std::string> works;
  size_t start = 0;
  while (start < arg.size()) {
    const size_t comma = std::min(arg.find(',', start), arg.size());
    works.emplace_back(arg.substr(start, comma - start));
    start = comma + 1;
  }
  return works;
}

Expected<WorkLine> read_work_line(const nlohmann::json& line) {
  if (!line.is_object()) {
    return make_error("the line is not a JSON object");
  }
  WorkLine out;
  if (Problem p = first({field(line, "work", out.work, ""),
                         optional_field(line, "not_run", out.not_run, ""),
                         optional_field(line, "lane", out.lane, "")})) {
    return *p;
  }
  return out;
}

namespace {
Problem read_value(const Json& v, const std::string& path, ListedDevice& into) {
  if (!v.is_object()) {
    return make_error(path + " is not an object");
  }
  return first({field(v, "ordinal", into.ordinal, path), field(v, "name", into.name, path)});
}
} // namespace

nlohmann::json to_json(const DeviceListing& listing) {
  Json out = {{"devices", Json::array()}};
  put_if(out, "error", listing.error);
  put_if(out, "init", listing.init);
  put_if(out, "init_name", listing.init_name);
  for (const ListedDevice& d : listing.devices) {
    out["devices"].push_back({{"ordinal", d.ordinal}, {"name", d.name}});
  }
  return out;
}

Expected<DeviceListing> read_device_listing(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  DeviceListing listing;
  if (Problem p = first({optional_field(payload, "error", listing.error, ""),
                         optional_field(payload, "init", listing.init, ""),
                         optional_field(payload, "init_name", listing.init_name, ""),
                         field(payload, "devices", listing.devices, "")})) {
    return *p;
  }
  return listing;
}

nlohmann::json to_json(const ConvRecord& r) {
  nlohmann::json out = {{"label", r.label},
                        {"shape", r.shape},
                        {"gflop", r.gflop},
                        {"heuristic", to_json(r.heuristic)}};
  if (r.found) {
    out["found"] = to_json(*r.found);
  }
  if (r.graph) {
    out["graph"] = to_json(*r.graph);
  }
  if (r.best) {
    out["best"] = {{"api", r.best->api},
                   {"what", r.best->what},
                   {"ms", r.best->ms},
                   {"tflops", r.best->tflops}};
  }
  return out;
}

void write_cudnn(const CudnnPayload& cudnn, nlohmann::json& out) {
  for (const char* key :
       {"cudnn_missing", "cudnn", "convolutions", "inputs_on", "determinism", "cudnn_failure"}) {
    out.erase(key);
  }
  if (cudnn.missing) {
    out["cudnn_missing"] = *cudnn.missing;
  }
  if (const auto& lib = cudnn.library) {
    out["cudnn"] = {{"path", lib->path},
                    {"version", lib->version},
                    {"cudart", lib->cudart},
                    {"graph_api", lib->graph_api}};
    if (!lib->graph_api) {
      out["cudnn"]["graph_api_missing"] = lib->graph_api_missing;
    }
    out["convolutions"] = list_json(cudnn.convolutions);
  }
  if (cudnn.inputs_on) {
    out["inputs_on"] = *cudnn.inputs_on;
  }
  if (const auto& d = cudnn.determinism) {
    out["determinism"] = {
        {"label", d->label}, {"algo", d->algo}, {"hashes", d->hashes}, {"equal", d->equal}};
  }
  if (const auto& f = cudnn.failure) {
    out["cudnn_failure"] = {{"call", f->call},
                            {"status", f->status},
                            {"name", f->name},
                            {"detail", f->detail},
                            {"stage", f->stage}};
  }
}

Expected<CudnnPayload> read_cudnn(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  CudnnPayload cudnn;
  if (Problem p = first({optional_field(payload, "cudnn_missing", cudnn.missing, ""),
                         optional_field(payload, "cudnn", cudnn.library, ""),
                         optional_field(payload, "inputs_on", cudnn.inputs_on, ""),
                         optional_field(payload, "determinism", cudnn.determinism, ""),
                         optional_field(payload, "cudnn_failure", cudnn.failure, "")})) {
    return *p;
  }
  if (cudnn.library) {
    if (Problem p = field(payload, "convolutions", cudnn.convolutions, "")) {
      return *p;
    }
  }
  return cudnn;
}

namespace {
Problem read_value(const Json& v, const std::string& path, PeerDevice& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "ordinal", into.ordinal, path), field(v, "name", into.name, path),
                field(v, "pci_bus_id", into.pci_bus_id, path)});
}

Problem read_value(const Json& v, const std::string& path, PeerAccess& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "from", into.from, path), field(v, "to", into.to, path),
                field(v, "can_access", into.can_access, path),
                field(v, "performance_rank", into.performance_rank, path),
                field(v, "native_atomics", into.native_atomics, path)});
}

Problem read_value(const Json& v, const std::string& path, PeerPair& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "from", into.from, path), field(v, "to", into.to, path),
                field(v, "bytes", into.bytes, path), field(v, "copies", into.copies, path),
                field(v, "write_gbps", into.write_gbps, path),
                field(v, "bidir_gbps", into.bidir_gbps, path),
                field(v, "latency_us", into.latency_us, path),
                optional_field(v, "at_once", into.at_once, path)});
}

Problem read_value(const Json& v, const std::string& path, PeerSweepPoint& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "from", into.from, path), field(v, "to", into.to, path),
                field(v, "bytes", into.bytes, path), field(v, "copies", into.copies, path),
                field(v, "write_gbps", into.write_gbps, path)});
}
} // namespace

void write_peers(const PeersPayload& peers, nlohmann::json& out) {
  Json devices = Json::array();
  for (const PeerDevice& d : peers.devices) {
    devices.push_back({{"ordinal", d.ordinal}, {"name", d.name}, {"pci_bus_id", d.pci_bus_id}});
  }
  Json access = Json::array();
  for (const PeerAccess& a : peers.access) {
    access.push_back({{"from", a.from},
                      {"to", a.to},
                      {"can_access", a.can_access},
                      {"performance_rank", a.performance_rank},
                      {"native_atomics", a.native_atomics}});
  }
  Json pairs = Json::array();
  for (const PeerPair& p : peers.pairs) {
    pairs.push_back({{"from", p.from},
                     {"to", p.to},
                     {"bytes", p.bytes},
                     {"copies", p.copies},
                     {"write_gbps", p.write_gbps},
                     {"bidir_gbps", p.bidir_gbps},
                     {"latency_us", p.latency_us}});
    if (p.at_once) {
      pairs.back()["at_once"] = *p.at_once;
    }
  }
  Json sweep = Json::array();
  for (const PeerSweepPoint& p : peers.sweep) {
    sweep.push_back({{"from", p.from},
                     {"to", p.to},
                     {"bytes", p.bytes},
                     {"copies", p.copies},
                     {"write_gbps", p.write_gbps}});
  }
  out["devices"] = std::move(devices);
  out["access"] = std::move(access);
  out["pairs"] = std::move(pairs);
  out["sweep"] = std::move(sweep);
  out["gated"] = peers.gated;
}

Expected<PeersPayload> read_peers(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  PeersPayload peers;
  if (Problem p = first(
          {field(payload, "devices", peers.devices, ""), field(payload, "access", peers.access, ""),
           field(payload, "pairs", peers.pairs, ""), field(payload, "sweep", peers.sweep, ""),
           field(payload, "gated", peers.gated, "")})) {
    return *p;
  }
  const int n = static_cast<int>(peers.devices.size());
  const auto listed = [n](int from, int to) { return from >= 0 && to >= 0 && from < n && to < n; };
  for (const PeerPair& pair : peers.pairs) {
    if (!listed(pair.from, pair.to)) {
      return make_error(
          fmt::format("pairs: {}->{} names a device that is not listed", pair.from, pair.to));
    }
  }
  for (const PeerSweepPoint& point : peers.sweep) {
    if (!listed(point.from, point.to)) {
      return make_error(
          fmt::format("sweep: {}->{} names a device that is not listed", point.from, point.to));
    }
  }
  return peers;
}

namespace {
Problem read_value(const Json& v, const std::string& path, NcclSize& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "bytes", into.bytes, path), field(v, "iterations", into.iterations, path),
                field(v, "ms", into.ms, path), field(v, "algbw_gbps", into.algbw_gbps, path),
                field(v, "busbw_gbps", into.busbw_gbps, path)});
}
} // namespace

void write_nccl(const NcclPayload& nccl, nlohmann::json& out) {
  Json sizes = Json::array();
  for (const NcclSize& s : nccl.sizes) {
    sizes.push_back({{"bytes", s.bytes},
                     {"iterations", s.iterations},
                     {"ms", s.ms},
                     {"algbw_gbps", s.algbw_gbps},
                     {"busbw_gbps", s.busbw_gbps}});
  }
  out["nccl_missing"] = nccl.missing;
  out["nccl_library"] = nccl.library;
  out["nccl_version"] = nccl.version;
  out["ranks"] = nccl.ranks;
  out["sizes"] = std::move(sizes);
}

Expected<NcclPayload> read_nccl(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  NcclPayload nccl;
  if (Problem p = first({field(payload, "nccl_missing", nccl.missing, ""),
                         field(payload, "nccl_library", nccl.library, ""),
                         field(payload, "nccl_version", nccl.version, ""),
                         field(payload, "ranks", nccl.ranks, ""),
                         field(payload, "sizes", nccl.sizes, "")})) {
    return *p;
  }
  return nccl;
}

namespace {
Problem read_value(const Json& v, const std::string& path, MemtestPattern& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "name", into.name, path), field(v, "passes", into.passes, path)});
}

Problem read_value(const Json& v, const std::string& path, MemtestError& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "address", into.address, path), field(v, "pattern", into.pattern, path),
                field(v, "expected", into.expected, path),
                field(v, "observed", into.observed, path)});
}

Problem read_value(const Json& v, const std::string& path, BurnMismatch& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "iteration", into.iteration, path), field(v, "words", into.words, path)});
}

Problem read_value(const Json& v, const std::string& path, BurnType& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  if (Problem p = first({field(v, "type", into.type, path), field(v, "n", into.n, path),
                         field(v, "iterations", into.iterations, path),
                         field(v, "tflops_median", into.tflops_median, path),
                         field(v, "tflops_min", into.tflops_min, path),
                         field(v, "elapsed_s", into.elapsed_s, path),
                         field(v, "mismatched_iterations", into.mismatched_iterations, path)})) {
    return p;
  }
  // "first_mismatch" is null when every iteration matched.
  into.first_mismatch.reset();
  if (!v.contains("first_mismatch")) {
    return make_error(path + ".first_mismatch is missing");
  }
  if (!v["first_mismatch"].is_null()) {
    BurnMismatch mismatch;
    if (Problem p = read_value(v["first_mismatch"], path + ".first_mismatch", mismatch)) {
      return p;
    }
    into.first_mismatch = mismatch;
  }
  return field(v, "result_hash", into.result_hash, path);
}

Problem read_value(const Json& v, const std::string& path, BurnWatch& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  if (Problem p =
          first({field(v, "available", into.available, path), field(v, "why", into.why, path),
                 field(v, "period_ms", into.period_ms, path), field(v, "t_ms", into.t_ms, path),
                 field(v, "sm_mhz", into.sm_mhz, path), field(v, "mem_mhz", into.mem_mhz, path),
                 field(v, "temp_c", into.temp_c, path), field(v, "power_w", into.power_w, path),
                 field(v, "reasons", into.reasons, path),
                 field(v, "max_sm_mhz", into.max_sm_mhz, path)})) {
    return p;
  }
  const size_t n = into.t_ms.size();
  if (into.sm_mhz.size() != n || into.mem_mhz.size() != n || into.temp_c.size() != n ||
      into.power_w.size() != n || into.reasons.size() != n) {
    return make_error(path + ": its sample lists differ in length");
  }
  return std::nullopt;
}

Problem read_value(const Json& v, const std::string& path, BurnXid& into) {
  if (Problem p = must_be_object(v, path)) {
    return p;
  }
  return first({field(v, "t_ms", into.t_ms, path), field(v, "xid", into.xid, path)});
}
} // namespace

void write_memtest(const MemtestReport& memtest, nlohmann::json& out) {
  Json patterns = Json::array();
  for (const MemtestPattern& p : memtest.patterns) {
    patterns.push_back({{"name", p.name}, {"passes", p.passes}});
  }
  Json errors = Json::array();
  for (const MemtestError& e : memtest.errors) {
    errors.push_back({{"address", e.address},
                      {"pattern", e.pattern},
                      {"expected", e.expected},
                      {"observed", e.observed}});
  }
  out["memtest"] = {{"free_bytes", memtest.free_bytes},   {"tested_bytes", memtest.tested_bytes},
                    {"chunks", memtest.chunks},           {"duration_s", memtest.duration_s},
                    {"elapsed_s", memtest.elapsed_s},     {"bytes_moved", memtest.bytes_moved},
                    {"rounds", memtest.rounds},           {"patterns", std::move(patterns)},
                    {"interrupted", memtest.interrupted}, {"error_count", memtest.error_count},
                    {"errors", std::move(errors)}};
}

Expected<MemtestReport> read_memtest(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  if (!payload.contains("memtest")) {
    return make_error("memtest is missing");
  }
  const Json& m = payload["memtest"];
  if (Problem p = must_be_object(m, "memtest")) {
    return *p;
  }
  MemtestReport memtest;
  const std::string at = "memtest";
  if (Problem p = first(
          {field(m, "free_bytes", memtest.free_bytes, at),
           field(m, "tested_bytes", memtest.tested_bytes, at),
           field(m, "chunks", memtest.chunks, at), field(m, "duration_s", memtest.duration_s, at),
           field(m, "elapsed_s", memtest.elapsed_s, at),
           field(m, "bytes_moved", memtest.bytes_moved, at), field(m, "rounds", memtest.rounds, at),
           field(m, "patterns", memtest.patterns, at),
           field(m, "interrupted", memtest.interrupted, at),
           field(m, "error_count", memtest.error_count, at),
           field(m, "errors", memtest.errors, at)})) {
    return *p;
  }
  return memtest;
}

void write_burn(const BurnReport& burn, nlohmann::json& out) {
  Json types = Json::array();
  for (const BurnType& t : burn.types) {
    Json line = {{"type", t.type},
                 {"n", t.n},
                 {"iterations", t.iterations},
                 {"tflops_median", t.tflops_median},
                 {"tflops_min", t.tflops_min},
                 {"elapsed_s", t.elapsed_s},
                 {"mismatched_iterations", t.mismatched_iterations},
                 {"first_mismatch", nullptr},
                 {"result_hash", t.result_hash}};
    if (t.first_mismatch) {
      line["first_mismatch"] = {{"iteration", t.first_mismatch->iteration},
                                {"words", t.first_mismatch->words}};
    }
    types.push_back(std::move(line));
  }
  const BurnWatch& w = burn.watch;
  Json xids = Json::array();
  for (const BurnXid& x : burn.xids) {
    xids.push_back({{"t_ms", x.t_ms}, {"xid", x.xid}});
  }
  out["burn"] = {{"duration_s", burn.duration_s},
                 {"elapsed_s", burn.elapsed_s},
                 {"interrupted", burn.interrupted},
                 {"cublas", burn.cublas},
                 {"types", std::move(types)},
                 {"watch",
                  {{"available", w.available},
                   {"why", w.why},
                   {"period_ms", w.period_ms},
                   {"t_ms", w.t_ms},
                   {"sm_mhz", w.sm_mhz},
                   {"mem_mhz", w.mem_mhz},
                   {"temp_c", w.temp_c},
                   {"power_w", w.power_w},
                   {"reasons", w.reasons},
                   {"max_sm_mhz", w.max_sm_mhz}}},
                 {"xid_watch", burn.xid_watch},
                 {"xids", std::move(xids)}};
}

Expected<BurnReport> read_burn(const nlohmann::json& payload) {
  if (!payload.is_object()) {
    return make_error("the result is not a JSON object");
  }
  if (!payload.contains("burn")) {
    return make_error("burn is missing");
  }
  const Json& b = payload["burn"];
  if (Problem p = must_be_object(b, "burn")) {
    return *p;
  }
  BurnReport burn;
  const std::string at = "burn";
  if (Problem p = first(
          {field(b, "duration_s", burn.duration_s, at), field(b, "elapsed_s", burn.elapsed_s, at),
           field(b, "interrupted", burn.interrupted, at), field(b, "cublas", burn.cublas, at),
           field(b, "types", burn.types, at), field(b, "watch", burn.watch, at),
           field(b, "xid_watch", burn.xid_watch, at), field(b, "xids", burn.xids, at)})) {
    return *p;
  }
  return burn;
}

} // namespace gpucheck::protocol
