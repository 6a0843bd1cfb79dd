#include "compat/matrix.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compat/name_pattern.hpp"
#include "compat/schema.hpp"
#include "gpucheck/model/json_input.hpp"

namespace gpucheck::compat {

std::string_view to_string(SourceStatus status) {
  switch (status) {
  case SourceStatus::official:
    return "official";
  case SourceStatus::official_via_copy:
    return "official_via_copy";
  case SourceStatus::third_party:
    return "third_party";
  case SourceStatus::unverified:
    return "unverified";
  }
  return "unverified";
}

namespace {

/// A problem at one place in the document.
struct DataError {
  std::string path;
  std::string message;
};

using Json = nlohmann::json;

/// A JSON value with its path, for reading with precise errors.
class Node {
public:
  Node(const Json& value, std::string path) : m_value(value), m_path(std::move(path)) {}

  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] const Json& json() const { return m_value; }

  [[noreturn]] void fail(const std::string& message) const { throw DataError{m_path, message}; }

  [[nodiscard]] bool has(const char* key) const {
    return m_value.is_object() && m_value.contains(key) && !m_value[key].is_null();
  }
  [[nodiscard]] Node at(const char* key) const {
    if (!m_value.is_object() || !m_value.contains(key)) {
      fail(fmt::format("missing required member '{}'", key));
    }
    return {m_value[key], fmt::format("{}.{}", m_path, key)};
  }
  [[nodiscard]] std::vector<Node> items() const {
    if (!m_value.is_array()) {
      fail("expected an array");
    }
    std::vector<Node> out;
    for (size_t i = 0; i < m_value.size(); ++i) {
      out.emplace_back(m_value[i], fmt::format("{}[{}]", m_path, i));
    }
    return out;
  }
  [[nodiscard]] std::string str() const {
    if (!m_value.is_string()) {
      fail("expected a string");
    }
    return m_value.get<std::string>();
  }
  [[nodiscard]] int integer() const {
    if (!m_value.is_number_integer()) {
      fail("expected an integer");
    }
    // get<int>() of a larger number truncates it silently: out of int's range is
    // an error naming the value.
    const bool in_range =
        m_value.is_number_unsigned()
            ? m_value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int>::max())
            : m_value.get<int64_t>() >= std::numeric_limits<int>::min() &&
                  m_value.get<int64_t>() <= std::numeric_limits<int>::max();
    if (!in_range) {
      fail(fmt::format("{} is out of range (an integer from {} to {})", m_value.dump(),
                       std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
    }
    return m_value.get<int>();
  }
  [[nodiscard]] bool boolean() const {
    if (!m_value.is_boolean()) {
      fail("expected true or false");
    }
    return m_value.get<bool>();
  }
  [[nodiscard]] Version version() const {
    const std::string text = str();
    std::optional<Version> v = Version::parse(text);
    if (!v) {
      fail(fmt::format("'{}' is not a version number", text));
    }
    return *v;
  }
  [[nodiscard]] Version cc() const {
    const std::string text = str();
    std::optional<Version> v = parse_cc(text);
    if (!v || text.find('.') == std::string::npos) {
      fail(fmt::format("'{}' is not a compute capability like \"8.6\"", text));
    }
    if (v->major_number() < 1 || v->major_number() > 20) {
      fail(fmt::format("compute capability '{}' is impossible", text));
    }
    return *v;
  }
  [[nodiscard]] DriverVersion driver() const {
    const std::string text = str();
    const Version v = version();
    if (v.major_number() < 100 || v.major_number() > 999 || v.parts().size() > 3) {
      fail(fmt::format("'{}' is not an NVIDIA driver version (NNN[.NN[.NN]])", text));
    }
    return {text, v};
  }
  [[nodiscard]] Version cuda() const {
    const Version v = version();
    if (v.parts().size() != 2 || v.major_number() < 1 || v.major_number() > 99) {
      fail(fmt::format("'{}' is not a CUDA version like \"13.0\"", str()));
    }
    return v;
  }
  [[nodiscard]] std::vector<int> branches() const {
    std::vector<int> out;
    for (const Node& item : items()) {
      const int branch = item.integer();
      if (branch < 100 || branch > 999) {
        item.fail(fmt::format("{} is not a driver branch", branch));
      }
      out.push_back(branch);
    }
    return out;
  }

  template <typename F> auto optional(const char* key, F read) const {
    using T = decltype(read(std::declval<Node>()));
    return has(key) ? std::optional<T>(read(at(key))) : std::optional<T>();
  }

private:
  const Json& m_value;
  std::string m_path;
};

std::string opt_str(const Node& node, const char* key) {
  return node.has(key) ? node.at(key).str() : std::string();
}

Provenance read_provenance(const Node& node) {
  Provenance p;
  const Node status = node.at("status");
  const std::string text = status.str();
  if (text == "official") {
    p.status = SourceStatus::official;
  } else if (text == "official_via_copy") {
    p.status = SourceStatus::official_via_copy;
  } else if (text == "third_party") {
    p.status = SourceStatus::third_party;
  } else if (text == "unverified") {
    p.status = SourceStatus::unverified;
  } else {
    status.fail(fmt::format("'{}' is not a status (official, official_via_copy, third_party, "
                            "unverified)",
                            text));
  }
  const Node source = node.at("source");
  p.source = source.str();
  if (p.source.rfind("https://", 0) != 0 || p.source.size() < 12) {
    source.fail(fmt::format("'{}' is not an https URL", p.source));
  }
  p.note = opt_str(node, "note");
  return p;
}

void require_ordered(const Node& node, const Version& from, const Version& to) {
  if (to < from) {
    node.fail(fmt::format("range ends ({}) before it starts ({})", to.str(), from.str()));
  }
}

CudaRelease read_release(const Node& n) {
  CudaRelease r;
  r.version = n.at("version").cuda();
  r.update = n.at("update").integer();
  if (r.update < 0 || r.update > 20) {
    n.at("update").fail("impossible update number");
  }
  r.prerelease = n.has("prerelease") && n.at("prerelease").boolean();
  r.label = n.at("label").str();
  r.linux_min_driver = n.at("linux_min_driver").driver();
  r.linux_min_driver_exact =
      !n.has("linux_min_driver_exact") || n.at("linux_min_driver_exact").boolean();
  r.windows_min_driver = n.optional("windows_min_driver", [](const Node& x) { return x.driver(); });
  r.windows_min_driver_unverified =
      n.has("windows_min_driver_status") && n.at("windows_min_driver_status").str() == "unverified";
  r.provenance = read_provenance(n);
  return r;
}

MinorVersionCompat read_mvc(const Node& n) {
  MinorVersionCompat m;
  m.major = n.at("major").integer();
  m.min_branch = n.at("min_branch").integer();
  m.below_branch = n.optional("below_branch", [](const Node& x) { return x.integer(); });
  m.linux_min_driver = n.at("linux_min_driver").driver();
  m.windows_min_driver = n.optional("windows_min_driver", [](const Node& x) { return x.driver(); });
  if (m.linux_min_driver.value.major_number() != m.min_branch) {
    n.at("linux_min_driver").fail("the minimum driver is not on min_branch");
  }
  if (m.below_branch && *m.below_branch <= m.min_branch) {
    n.at("below_branch").fail("the range ends before it starts");
  }
  m.provenance = read_provenance(n);
  return m;
}

ForwardCompat read_forward_compat(const Node& n) {
  ForwardCompat f;
  for (const Node& item : n.at("supported_gpu_classes").items()) {
    f.supported_gpu_classes.push_back(item.str());
  }
  for (const Node& item : n.at("conditional_gpu_classes").items()) {
    f.conditional_gpu_classes.push_back(item.str());
  }
  f.base_branches = n.at("base_branches").branches();
  for (const Node& item : n.at("packages").items()) {
    CompatPackage p;
    p.package = item.at("package").str();
    p.cuda = item.at("cuda").cuda();
    p.compatible_branches = item.at("compatible_branches").branches();
    p.not_needed_branches = item.at("not_needed_branches").branches();
    for (int branch : p.compatible_branches) {
      if (std::find(f.base_branches.begin(), f.base_branches.end(), branch) ==
          f.base_branches.end()) {
        item.at("compatible_branches").fail(fmt::format("{} is not a base branch", branch));
      }
    }
    p.provenance = read_provenance(item);
    f.packages.push_back(std::move(p));
  }
  f.provenance = read_provenance(n);
  return f;
}

DriverBranch read_branch(const Node& n) {
  DriverBranch b;
  b.branch = n.at("branch").integer();
  b.designation = n.at("designation").str();
  b.end_of_life = n.optional("end_of_life", [](const Node& x) { return x.str(); });
  b.highest_cuda_major = n.at("highest_cuda_major").integer();
  b.provenance = read_provenance(n);
  return b;
}

ComputeCapability read_cc(const Node& n) {
  ComputeCapability c;
  c.cc = n.at("cc").cc();
  c.arch = n.at("arch").str();
  c.first_cuda = n.at("first_cuda").cuda();
  c.last_cuda_major = n.optional("last_cuda_major", [](const Node& x) { return x.integer(); });
  c.last_driver_branch =
      n.optional("last_driver_branch", [](const Node& x) { return x.integer(); });
  if (c.last_cuda_major && *c.last_cuda_major < c.first_cuda.major_number()) {
    n.at("last_cuda_major").fail("the last CUDA major is before the first CUDA");
  }
  c.provenance = read_provenance(n);
  return c;
}

std::vector<Version> read_ccs(const Node& n) {
  std::vector<Version> out;
  for (const Node& item : n.items()) {
    out.push_back(item.cc());
  }
  return out;
}

CudaTargets read_targets(const Node& n) {
  CudaTargets t;
  t.cuda_from = n.at("cuda_from").cuda();
  t.cuda_to = n.at("cuda_to").cuda();
  require_ordered(n.at("cuda_to"), t.cuda_from, t.cuda_to);
  t.sm = read_ccs(n.at("sm"));
  t.deprecated = read_ccs(n.at("deprecated"));
  for (const Version& cc : t.deprecated) {
    if (std::find(t.sm.begin(), t.sm.end(), cc) == t.sm.end()) {
      n.at("deprecated").fail(fmt::format("{} is deprecated but not a target", cc.str()));
    }
  }
  t.provenance = read_provenance(n);
  return t;
}

GpuProduct read_gpu(const Node& n) {
  GpuProduct g;
  g.pattern = n.at("pattern").str();
  if (g.pattern.empty()) {
    n.at("pattern").fail("empty name pattern");
  }
  if (Expected<NamePattern> compiled = NamePattern::compile(g.pattern, true); !compiled) {
    // At most 80 characters of the pattern: a hostile one may be huge.
    n.at("pattern").fail(
        fmt::format("name pattern '{}': {}",
                    g.pattern.size() > 80 ? g.pattern.substr(0, 80) + "..." : g.pattern,
                    compiled.error().message));
  }
  g.product = n.at("product").str();
  g.arch = n.at("arch").str();
  g.cc = n.at("cc").cc();
  g.gpu_class = n.at("class").str();
  if (n.has("pci_device_ids")) {
    for (const Node& item : n.at("pci_device_ids").items()) {
      g.pci_device_ids.push_back(item.str());
    }
  }
  g.provenance = read_provenance(n);
  return g;
}

CudnnRelease read_cudnn(const Node& n) {
  CudnnRelease c;
  c.from = n.at("from").version();
  c.to = n.at("to").version();
  require_ordered(n.at("to"), c.from, c.to);
  for (const Node& item : n.at("builds").items()) {
    CudnnBuild b;
    b.cuda_from = item.at("cuda_from").cuda();
    b.cuda_to = item.at("cuda_to").cuda();
    require_ordered(item.at("cuda_to"), b.cuda_from, b.cuda_to);
    b.linux_min_driver =
        item.optional("linux_min_driver", [](const Node& x) { return x.driver(); });
    b.windows_min_driver =
        item.optional("windows_min_driver", [](const Node& x) { return x.driver(); });
    b.cc_min = item.optional("cc_min", [](const Node& x) { return x.cc(); });
    b.cc_max = item.optional("cc_max", [](const Node& x) { return x.cc(); });
    b.note = opt_str(item, "note");
    c.builds.push_back(std::move(b));
  }
  c.cc_min = n.optional("cc_min", [](const Node& x) { return x.cc(); });
  c.cc_max = n.optional("cc_max", [](const Node& x) { return x.cc(); });
  if (c.cc_min && c.cc_max && *c.cc_max < *c.cc_min) {
    n.at("cc_max").fail("cc_max is below cc_min");
  }
  c.provenance = read_provenance(n);
  return c;
}

CudnnLayout read_layout(const Node& n) {
  CudnnLayout l;
  l.major = n.at("major").integer();
  for (const Node& item : n.at("libraries").items()) {
    l.libraries.push_back(item.str());
  }
  if (n.has("depends_on")) {
    for (const Node& item : n.at("depends_on").items()) {
      l.depends_on.push_back(item.str());
    }
  }
  l.version_encoding = n.at("version_encoding").str();
  l.provenance = read_provenance(n);
  return l;
}

PytorchWheel read_pytorch(const Node& n) {
  PytorchWheel w;
  w.version = n.at("version").version();
  w.wheel = n.at("wheel").str();
  w.cuda = n.at("cuda").cuda();
  if (w.wheel != fmt::format("cu{}{}", w.cuda.major_number(), w.cuda.minor_number())) {
    n.at("wheel").fail(fmt::format("'{}' does not match CUDA {}", w.wheel, w.cuda.str()));
  }
  w.cudnn = n.at("cudnn").str();
  w.channel = n.at("channel").str();
  w.archs = n.optional("archs", [](const Node& x) { return read_ccs(x); });
  w.ptx = n.optional("ptx", [](const Node& x) { return x.cc(); });
  w.provenance = read_provenance(n);
  return w;
}

TensorflowBuild read_tensorflow(const Node& n) {
  TensorflowBuild t;
  t.version = n.at("version").str();
  t.cuda = n.at("cuda").cuda();
  t.cudnn = n.at("cudnn").str();
  t.provenance = read_provenance(n);
  return t;
}

JaxWheel read_jax(const Node& n) {
  JaxWheel j;
  j.wheel = n.at("wheel").str();
  j.built_with_cuda = n.at("built_with_cuda").cuda();
  j.cuda_min = n.at("cuda_min").cuda();
  j.cudnn_min = n.at("cudnn_min").str();
  j.cudnn_below = n.at("cudnn_below").str();
  j.linux_min_driver = n.at("linux_min_driver").driver();
  j.cc_min = n.at("cc_min").cc();
  j.provenance = read_provenance(n);
  return j;
}

PciDeviceList read_pci_devices(const Node& n) {
  PciDeviceList list;
  list.driver = n.at("driver").driver();
  for (const Node& item : n.at("devices").items()) {
    list.devices.push_back({item.at("id").str(), item.at("name").str()});
  }
  list.provenance = read_provenance(n);
  return list;
}

template <typename T, typename F>
std::vector<T> read_list(const Node& root, const char* key, F read) {
  std::vector<T> out;
  for (const Node& item : root.at(key).items()) {
    out.push_back(read(item));
  }
  return out;
}

/// Checks across entries that a schema cannot express.
void check_consistency(const Matrix& m, const Node& root) {
  std::set<std::tuple<Version, int, bool>> seen;
  const std::vector<Node> releases = root.at("cuda_releases").items();
  for (size_t i = 0; i < m.cuda_releases.size(); ++i) {
    const CudaRelease& r = m.cuda_releases[i];
    if (!seen.emplace(r.version, r.update, r.prerelease).second) {
      releases[i].fail(fmt::format("CUDA {} update {} is listed twice", r.version.str(), r.update));
    }
    // Within a release, a later update never needs an older driver.
    for (size_t j = 0; j < i; ++j) {
      const CudaRelease& other = m.cuda_releases[j];
      if (other.version == r.version && !other.prerelease && !r.prerelease &&
          other.update > r.update && other.linux_min_driver.value < r.linux_min_driver.value) {
        releases[i]
            .at("linux_min_driver")
            .fail(fmt::format("CUDA {} update {} needs {} but the later update {} needs only {}",
                              r.version.str(), r.update, r.linux_min_driver.text, other.update,
                              other.linux_min_driver.text));
      }
    }
  }
  for (const MinorVersionCompat& mvc : m.minor_version_compatibility) {
    const bool known =
        std::any_of(m.cuda_releases.begin(), m.cuda_releases.end(),
                    [&](const CudaRelease& r) { return r.version.major_number() == mvc.major; });
    if (!known) {
      root.at("minor_version_compatibility")
          .fail(fmt::format("CUDA {} has no release in cuda_releases", mvc.major));
    }
  }
  if (m.pci_devices) {
    std::set<std::string> ids;
    const std::vector<Node> devices = root.at("pci_devices").at("devices").items();
    for (size_t i = 0; i < m.pci_devices->devices.size(); ++i) {
      if (!ids.insert(m.pci_devices->devices[i].id).second) {
        devices[i].at("id").fail(
            fmt::format("device {} is listed twice", m.pci_devices->devices[i].id));
      }
    }
  }
}

Matrix read_matrix(const Json& json, std::string origin) {
  const Node root(json, "$");
  Matrix m;
  m.origin = std::move(origin);
  m.matrix_version = root.at("matrix_version").str();
  m.compiled = root.at("compiled").str();
  m.cuda_releases = read_list<CudaRelease>(root, "cuda_releases", read_release);
  m.minor_version_compatibility =
      read_list<MinorVersionCompat>(root, "minor_version_compatibility", read_mvc);
  m.forward_compat = read_forward_compat(root.at("forward_compat"));
  m.driver_branches = read_list<DriverBranch>(root, "driver_branches", read_branch);
  m.compute_capabilities = read_list<ComputeCapability>(root, "compute_capabilities", read_cc);
  m.cuda_targets = read_list<CudaTargets>(root, "cuda_targets", read_targets);
  m.gpus = read_list<GpuProduct>(root, "gpus", read_gpu);
  m.cudnn = read_list<CudnnRelease>(root, "cudnn", read_cudnn);
  m.cudnn_layout = read_list<CudnnLayout>(root, "cudnn_layout", read_layout);
  m.pytorch = read_list<PytorchWheel>(root, "pytorch", read_pytorch);
  m.tensorflow = read_list<TensorflowBuild>(root, "tensorflow", read_tensorflow);
  m.tensorflow_gpu_cc_min =
      root.optional("tensorflow_gpu_cc_min", [](const Node& x) { return x.cc(); });
  m.jax = read_list<JaxWheel>(root, "jax", read_jax);
  m.pci_devices = root.optional("pci_devices", read_pci_devices);
  check_consistency(m, root);
  return m;
}

Expected<Matrix> parse(std::string_view text, std::string origin, bool check_schema) {
  // Never throws: a syntax error, 1e400 or deep nesting is an error naming the JSON path.
  Expected<Json> parsed = parse_json_input(text);
  if (!parsed) {
    return make_error(fmt::format("{}: not valid JSON {}", origin, parsed.error().message));
  }
  Json json = std::move(parsed).value();
  if (check_schema) {
    const Json schema = Json::parse(embedded_matrix_schema_json());
    const std::vector<SchemaProblem> problems = validate_schema(json, schema, 1);
    if (!problems.empty()) {
      return make_error(
          fmt::format("{}: {}: {}", origin, problems.front().path, problems.front().message));
    }
  }
  try {
    return read_matrix(json, origin);
  } catch (const DataError& e) {
    return make_error(fmt::format("{}: {}: {}", origin, e.path, e.message));
  }
}

std::unique_ptr<Matrix>& override_slot() {
  static std::unique_ptr<Matrix> k_override;
  return k_override;
}

} // namespace

Expected<Matrix> parse_matrix(std::string_view text, std::string origin) {
  return parse(text, std::move(origin), true);
}

Expected<Matrix> load_matrix_file(const std::string& path) {
  Expected<std::string> text = read_input_file(path);
  if (!text) {
    return make_error(
        fmt::format("{}: cannot read the matrix file ({})", path, text.error().message));
  }
  return parse_matrix(*text, path);
}

const Matrix& embedded_matrix() {
  // The embedded text is checked against the schema by the unit tests; at run time only the
  // typed read runs, which keeps `gpucheck --quick` fast.
  static const Matrix k_matrix = [] {
    Expected<Matrix> m = parse(embedded_matrix_json(), "embedded", false);
    if (!m) {
      throw std::logic_error("embedded compatibility matrix is invalid: " + m.error().message);
    }
    return std::move(m).value();
  }();
  return k_matrix;
}

const Matrix& active_matrix() {
  const std::unique_ptr<Matrix>& slot = override_slot();
  return slot ? *slot : embedded_matrix();
}

void use_matrix(Matrix matrix) {
  override_slot() = std::make_unique<Matrix>(std::move(matrix));
}

} // namespace gpucheck::compat
