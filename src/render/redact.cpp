#include "render/redact.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <optional>

#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::render {

namespace {

constexpr size_t k_uuid_length = 36;  // 8-4-4-4-12 hex digits
constexpr size_t k_mac_length = 17;   // six pairs of hex digits and five separators
constexpr size_t k_prefix_length = 4; // "GPU-", "MIG-"
constexpr int k_ipv6_groups = 8;
/// Hex digits after "GPU-"/"MIG-" from which a UUID prefix identifies a device.
constexpr size_t k_min_uuid_prefix = 4;

/// Words of the GPU stack's own vocabulary: a user or host with such a name is replaced in home
/// paths only, never wherever the word stands (that would eat "/usr/lib/nvidia").
/// Words a user or host may be named that are also the stack's or the report's own vocabulary
/// (statuses, severities, check-id parts, modes): such a name is replaced in home paths only, so
/// that USER=pass or USER=driver neither breaks nor mangles the report.
constexpr std::array<std::string_view, 44> k_vocabulary = {
    "root",  "nobody",  "nvidia", "cuda",   "gpu",   "lib",       "lib64",  "local", "usr",
    "share", "bin",     "opt",    "home",   "etc",   "dev",       "proc",   "sys",   "python",
    "conda", "docker",  "admin",  "user",   "test",  "localhost", "pass",   "warn",  "fail",
    "skip",  "error",   "info",   "driver", "libs",  "env",       "compat", "fw",    "gate",
    "gates", "toolkit", "system", "replay", "quick", "standard",  "host",   "mig"};

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

/// Characters of a user name in a home path ("/home/alice.smith/...").
bool is_user_char(char c) {
  return is_word_char(c) || c == '.' || c == '-' || c == '@' || c == '$';
}

/// "8c02e5d1-3e7a-4b90-b2c6-7f10d4a8e920" at text[at].
bool is_uuid_at(std::string_view text, size_t at) {
  if (text.size() - at < k_uuid_length) {
    return false;
  }
  for (size_t i = 0; i < k_uuid_length; ++i) {
    const char c = text[at + i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !is_hex(c)) {
      return false;
    }
  }
  return true;
}

/// The length of a UUID's first characters at text[at] ("8c02e5d1-3e" of
/// "8c02e5d1-3e7a-..."): hex digits, with dashes only where a UUID has them.
size_t uuid_prefix_length(std::string_view text, size_t at) {
  size_t n = 0;
  while (at + n < text.size() && n < k_uuid_length) {
    const char c = text[at + n];
    const bool dash = n == 8 || n == 13 || n == 18 || n == 23;
    if (dash ? c != '-' : !is_hex(c)) {
      break;
    }
    ++n;
  }
  while (n > 0 && text[at + n - 1] == '-') {
    --n;
  }
  return n;
}

/// "00:1a:2b:3c:4d:5e" (or with '-') at text[at].
bool is_mac_at(std::string_view text, size_t at) {
  if (text.size() - at < k_mac_length) {
    return false;
  }
  const char separator = text[at + 2];
  if (separator != ':' && separator != '-') {
    return false;
  }
  for (size_t i = 0; i < k_mac_length; ++i) {
    const char c = text[at + i];
    if (i % 3 == 2 ? c != separator : !is_hex(c)) {
      return false;
    }
  }
  return true;
}

bool is_ipv4(std::string_view text) {
  int parts = 0;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = i;
    while (j < text.size() && is_digit(text[j])) {
      ++j;
    }
    if (j == i || j - i > 3 || std::stoi(std::string(text.substr(i, j - i))) > 255) {
      return false;
    }
    ++parts;
    if (j == text.size()) {
      break;
    }
    if (text[j] != '.') {
      return false;
    }
    i = j + 1;
  }
  return parts == 4;
}

/// Groups of an IPv6 half ("fe80:0:1"), or -1 when a group is not 1-4 hex digits. The last
/// group may be a dotted IPv4 address (two groups) when `last` is set.
int ipv6_groups(std::string_view half, bool last) {
  if (half.empty()) {
    return 0;
  }
  int groups = 0;
  size_t start = 0;
  while (true) {
    const size_t colon = half.find(':', start);
    const std::string_view group = half.substr(
        start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    const bool final_group = colon == std::string_view::npos;
    if (final_group && last && group.find('.') != std::string_view::npos) {
      if (!is_ipv4(group)) {
        return -1;
      }
      groups += 2;
    } else {
      if (group.empty() || group.size() > 4 || !std::all_of(group.begin(), group.end(), is_hex)) {
        return -1;
      }
      ++groups;
    }
    if (final_group) {
      return groups;
    }
    start = colon + 1;
  }
}

bool is_ipv6(std::string_view text) {
  if (std::count(text.begin(), text.end(), ':') < 2 ||
      std::none_of(text.begin(), text.end(), is_digit)) {
    return false;
  }
  const size_t gap = text.find("::");
  if (gap == std::string_view::npos) {
    return ipv6_groups(text, true) == k_ipv6_groups;
  }
  if (text.find("::", gap + 1) != std::string_view::npos) {
    return false;
  }
  const std::string_view head = text.substr(0, gap);
  const std::string_view tail = text.substr(gap + 2);
  const int head_groups = ipv6_groups(head, false);
  const int tail_groups = ipv6_groups(tail, true);
  return head_groups >= 0 && tail_groups >= 0 && head_groups + tail_groups < k_ipv6_groups;
}

/// Fields that hold versions only: a four-part version there is not an IPv4 address.
bool is_version_key(std::string_view key) {
  return key == "version" || key.ends_with("_version");
}

/// `text` with each run of characters that `in_run` accepts (trailing dots left out) that stands
/// alone as a word replaced by what `replace` gives for it; a run it gives nullopt for stays.
std::string replace_standalone_runs(
    std::string_view text, bool (*in_run)(char),
    const std::function<std::optional<std::string>(std::string_view)>& replace) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (!in_run(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && in_run(text[end])) {
      ++end;
    }
    std::string_view run = text.substr(i, end - i);
    while (run.ends_with('.')) {
      run.remove_suffix(1);
    }
    const bool bounded =
        (i == 0 || !is_word_char(text[i - 1])) && (end == text.size() || !is_word_char(text[end]));
    std::optional<std::string> replacement = bounded ? replace(run) : std::nullopt;
    if (replacement) {
      out += *replacement;
      i += run.size();
    } else {
      out += text.substr(i, end - i);
      i = end;
    }
  }
  return out;
}

/// Every value of a version field in a JSON document.
void collect_versions(const nlohmann::json& j, std::string_view key, std::set<std::string>& into) {
  if (j.is_string()) {
    if (is_version_key(key)) {
      into.insert(j.get<std::string>());
    }
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      collect_versions(it.value(), it.key(), into);
    }
  } else if (j.is_array()) {
    for (const nlohmann::json& item : j) {
      collect_versions(item, key, into);
    }
  }
}

/// Every string in a JSON document (values only; keys name fields or variables).
/// Members whose values are the report's own vocabulary (ids, codes, closed sets): never
/// redacted, whatever a user is called.
bool is_vocabulary_key(std::string_view key) {
  for (std::string_view name : {"check_id", "code", "status", "severity", "overall", "mode", "kind",
                                "unit", "probe", "found_by", "source", "verdict"}) {
    if (key == name) {
      return true;
    }
  }
  return false;
}

/// Every word of the report's own vocabulary in a JSON document: the parts of check ids, finding
/// codes, statuses and the other closed-set values ("gpu.ecc" -> "gpu", "ecc").
void collect_vocabulary(const nlohmann::json& j, std::string_view key,
                        std::set<std::string>& into) {
  if (j.is_string()) {
    if (is_vocabulary_key(key)) {
      std::string word;
      for (const char c : j.get_ref<const std::string&>() + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
          word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!word.empty()) {
          into.insert(word);
          word.clear();
        }
      }
    }
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      collect_vocabulary(it.value(), it.key(), into);
    }
  } else if (j.is_array()) {
    for (const nlohmann::json& item : j) {
      collect_vocabulary(item, key, into);
    }
  }
}

void for_each_string(nlohmann::json& j, std::string_view key,
                     const std::function<void(std::string&)>& visit) {
  if (j.is_string()) {
    if (!is_version_key(key) && !is_vocabulary_key(key)) {
      visit(j.get_ref<std::string&>());
    }
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      for_each_string(it.value(), it.key(), visit);
    }
  } else if (j.is_array()) {
    for (nlohmann::json& item : j) {
      for_each_string(item, key, visit);
    }
  }
}

bool is_placeholder(std::string_view name, std::string_view prefix) {
  return name.size() > prefix.size() + 1 && name.starts_with(prefix) &&
         name[prefix.size()] == '-' &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size() + 1), name.end(),
                     is_digit);
}

} // namespace

bool is_replaceable_name(std::string_view name) {
  if (name.size() < 2 || std::none_of(name.begin(), name.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) != 0;
      })) {
    return false;
  }
  const std::string folded = lower(name);
  return std::find(k_vocabulary.begin(), k_vocabulary.end(), folded) == k_vocabulary.end();
}

Redactor::Redactor(const RedactionHints& hints) {
  for (const std::string& host : hints.host_names) {
    learn_host(host);
  }
  for (const std::string& user : hints.user_names) {
    learn_user(user);
  }
}

std::string Redactor::placeholder(std::map<std::string, std::string>& table, const std::string& key,
                                  std::string_view prefix) {
  const auto found = table.find(key);
  if (found != table.end()) {
    return found->second;
  }
  const std::string name = fmt::format("{}-{}", prefix, m_counters[std::string(prefix)]++);
  table.emplace(key, name);
  return name;
}

void Redactor::learn_vocabulary(const nlohmann::json& document) {
  collect_vocabulary(document, "", m_vocabulary);
  // A name learned before that is a word of this report is replaced in home paths only.
  for (auto it = m_literals.begin(); it != m_literals.end();) {
    if (m_vocabulary.contains(lower(it->first)) &&
        (it->second.starts_with("user-") || it->second.starts_with("host-"))) {
      it = m_literals.erase(it);
    } else {
      ++it;
    }
  }
}

bool Redactor::is_word_name(std::string_view name) const {
  return is_replaceable_name(name) && !m_vocabulary.contains(lower(name));
}

void Redactor::learn_host(const std::string& host) {
  if (!is_word_name(host) || m_literals.contains(host)) {
    return;
  }
  const std::string name = fmt::format("host-{}", m_counters["host"]++);
  m_literals[host] = name;
  // "node7.cluster.example.com" is also called "node7".
  const size_t dot = host.find('.');
  if (dot != std::string::npos && is_word_name(host.substr(0, dot))) {
    m_literals.emplace(host.substr(0, dot), name);
  }
}

void Redactor::learn_user(const std::string& user) {
  if (user.empty() || is_placeholder(user, "user")) {
    return;
  }
  const std::string name = placeholder(m_users, user, "user");
  // A name that is also a word of the stack's vocabulary ("nvidia") is replaced in home paths
  // only; any other name wherever it stands as a word.
  if (is_word_name(user)) {
    m_literals.emplace(user, name);
  }
}

void Redactor::learn(const SystemSnapshot& snapshot) {
  learn_host(snapshot.host.hostname);
  std::vector<const GpuInfo*> gpus;
  for (const GpuInfo& gpu : snapshot.gpus) {
    gpus.push_back(&gpu);
  }
  std::stable_sort(gpus.begin(), gpus.end(),
                   [](const GpuInfo* a, const GpuInfo* b) { return a->index < b->index; });
  std::vector<std::string> uuids;
  for (const GpuInfo* gpu : gpus) {
    uuids.push_back(gpu->uuid);
  }
  for (const CudaDevice& device : snapshot.cuda.devices) {
    uuids.push_back(device.uuid);
  }
  for (const std::string& uuid : uuids) {
    const std::string_view bare =
        uuid.starts_with("GPU-") ? std::string_view(uuid).substr(k_prefix_length) : uuid;
    if (bare.size() == k_uuid_length && is_uuid_at(bare, 0)) {
      const std::string key = lower(bare);
      m_gpu_uuids.insert(key);
      placeholder(m_uuids, key, "GPU");
    } else if (uuid.size() >= 4 && !is_placeholder(uuid, "GPU")) {
      // Not UUID-shaped (an old driver, a fake): replaced as it stands.
      m_literals.emplace(uuid, placeholder(m_uuids, uuid, "GPU"));
    }
  }
  for (const GpuInfo* gpu : gpus) {
    const std::string& serial = gpu->serial;
    if (serial.size() >= 4 && serial != "N/A" && serial != "[N/A]" &&
        !is_placeholder(serial, "serial")) {
      m_literals.emplace(serial, placeholder(m_serials, serial, "serial"));
    }
  }
  for (const char* variable : {"USER", "LOGNAME", "SUDO_USER"}) {
    if (const std::optional<std::string> user = snapshot.env(variable)) {
      learn_user(*user);
    }
  }
  if (const std::optional<std::string> home = snapshot.env("HOME")) {
    learn_home_users(*home);
  }
  if (const std::optional<std::string> host = snapshot.env("HOSTNAME")) {
    learn_host(*host);
  }
}

namespace {

/// A label (lower case, before the colon) of a value that identifies one part: a GUID, or the
/// "GPU PDI" (the per-device identifier nvidia-smi -q prints since driver 580).
bool is_identifier_label(std::string_view label) {
  label = label.substr(0, label.find_last_not_of(" \t") + 1);
  return label.find("guid") != std::string_view::npos || label.ends_with(" pdi") || label == "pdi";
}

} // namespace

void Redactor::learn_labelled_serials(std::string_view text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end;
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::string folded = lower(line);
    size_t label_end = std::string::npos;
    std::string_view prefix;
    if (const size_t at = folded.find("serial number"); at != std::string::npos) {
      label_end = at + std::string_view("serial number").size();
      prefix = "serial";
    } else if (const size_t colon = folded.find(':');
               colon != std::string::npos && is_identifier_label(folded.substr(0, colon))) {
      label_end = colon;
      prefix = "guid";
    } else {
      continue;
    }
    // The value: after blanks and one colon, to the end of the line.
    size_t from = line.find_first_not_of(" \t", label_end);
    if (from != std::string_view::npos && line[from] == ':') {
      from = line.find_first_not_of(" \t", from + 1);
    }
    if (from == std::string_view::npos) {
      continue;
    }
    const size_t last = line.find_last_not_of(" \t\r");
    const std::string value(line.substr(from, last + 1 - from));
    const std::string folded_value = lower(value);
    if (value.size() < 4 || folded_value == "n/a" || folded_value == "[n/a]" ||
        folded_value.starts_with("not ") || folded_value == "unknown" ||
        is_placeholder(value, prefix) || m_literals.contains(value)) {
      continue;
    }
    m_literals.emplace(value, placeholder(prefix == "serial" ? m_serials : m_guids, value, prefix));
  }
}

void Redactor::learn_home_users(std::string_view text) {
  for (const std::string_view root : {std::string_view("/home/"), std::string_view("/Users/")}) {
    size_t at = text.find(root);
    while (at != std::string_view::npos) {
      size_t end = at + root.size();
      while (end < text.size() && is_user_char(text[end])) {
        ++end;
      }
      const std::string_view user = text.substr(at + root.size(), end - at - root.size());
      if (!user.empty()) {
        learn_user(std::string(user));
      }
      at = text.find(root, end);
    }
  }
}

std::string Redactor::replace_home_users(std::string_view text) {
  learn_home_users(text);
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    std::string_view root;
    for (const std::string_view candidate :
         {std::string_view("/home/"), std::string_view("/Users/")}) {
      if (text.substr(i).starts_with(candidate)) {
        root = candidate;
      }
    }
    if (root.empty()) {
      out += text[i++];
      continue;
    }
    size_t end = i + root.size();
    while (end < text.size() && is_user_char(text[end])) {
      ++end;
    }
    const std::string user(text.substr(i + root.size(), end - i - root.size()));
    out += root;
    const auto found = m_users.find(user);
    out += found != m_users.end() ? found->second : user;
    i = end;
  }
  return out;
}

std::string Redactor::replace_literals(std::string text) const {
  // Longest first, so "node7.example.com" wins over "node7".
  std::vector<const std::pair<const std::string, std::string>*> order;
  for (const auto& entry : m_literals) {
    order.push_back(&entry);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->first.size() > b->first.size(); });
  for (const auto* entry : order) {
    const std::string& word = entry->first;
    size_t at = text.find(word);
    while (at != std::string::npos) {
      const size_t end = at + word.size();
      const bool bounded = (at == 0 || !is_word_char(text[at - 1])) &&
                           (end == text.size() || !is_word_char(text[end]));
      if (bounded) {
        text.replace(at, word.size(), entry->second);
        at = text.find(word, at + entry->second.size());
      } else {
        at = text.find(word, at + 1);
      }
    }
  }
  return replace_user_compounds(std::move(text));
}

std::string Redactor::replace_user_compounds(std::string text) const {
  // A user's name that begins or ends a run of letters and digits ("/tmp/alicedir",
  // "alice_gpu.tgz", "bobs-notes") takes the whole run with it: the run may be that user's, or
  // another's whose name starts the same, and neither is left to read. Names of four characters
  // or more only, not words of the report's vocabulary (those are replaced as words only), and
  // none that begins or ends such a word ("comp" would eat "compute" of a check id).
  std::vector<std::pair<std::string_view, std::string_view>> names;
  for (const auto& [user, placeholder] : m_users) {
    const std::string low = lower(user);
    const bool clash = std::any_of(m_vocabulary.begin(), m_vocabulary.end(), [&](const auto& w) {
      return w.starts_with(low) || w.ends_with(low);
    });
    if (user.size() >= 4 && m_literals.contains(user) && !clash) {
      names.emplace_back(user, placeholder);
    }
  }
  if (names.empty()) {
    return text;
  }
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (!alnum(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && alnum(text[end])) {
      ++end;
    }
    const std::string_view run = std::string_view(text).substr(i, end - i);
    std::string_view replacement = run;
    for (const auto& [name, placeholder] : names) {
      if (run.starts_with(name) || run.ends_with(name)) {
        replacement = placeholder;
        break;
      }
    }
    out += replacement;
    i = end;
  }
  return out;
}

std::string Redactor::replace_uuids(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const bool bounded_after =
        i + k_uuid_length == text.size() ||
        (i + k_uuid_length < text.size() && !is_word_char(text[i + k_uuid_length]));
    if (!is_uuid_at(text, i) || !bounded_after) {
      out += text[i++];
      continue;
    }
    std::string_view prefix;
    if (out.size() >= k_prefix_length &&
        (out.ends_with("GPU-") || out.ends_with("MIG-") || out.ends_with("gpu-"))) {
      prefix = std::string_view(out).substr(out.size() - k_prefix_length);
    }
    const size_t before = out.size() - prefix.size();
    if (before > 0 && is_word_char(out[before - 1])) {
      out += text[i++];
      continue;
    }
    const std::string key = lower(text.substr(i, k_uuid_length));
    const std::string kind = lower(prefix) == "mig-"                          ? "MIG"
                             : (!prefix.empty() || m_gpu_uuids.contains(key)) ? "GPU"
                                                                              : "uuid";
    const std::string name = placeholder(m_uuids, key, kind);
    out.resize(before);
    out += name;
    i += k_uuid_length;
  }
  return out;
}

std::string Redactor::replace_uuid_prefixes(std::string_view text) {
  // CUDA_VISIBLE_DEVICES takes any unique prefix of a GPU's or MIG device's UUID
  // ("GPU-8c02e5d1", "MIG-1a2b"): after "GPU-" or "MIG-", a run of at least 4 hex digits shaped
  // like a UUID's start is an identifier too. A prefix of a GPU the snapshot names gets that
  // GPU's placeholder.
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const std::string_view rest = text.substr(i);
    const std::string head = lower(rest.substr(0, k_prefix_length));
    const bool bounded_before = i == 0 || !is_word_char(text[i - 1]);
    if (!bounded_before || (head != "gpu-" && head != "mig-")) {
      out += text[i++];
      continue;
    }
    const size_t at = i + k_prefix_length;
    const size_t length = uuid_prefix_length(text, at);
    const size_t end = at + length;
    const bool bounded_after = end == text.size() || !is_word_char(text[end]);
    const std::string key = lower(text.substr(at, length));
    const size_t hex_digits = static_cast<size_t>(
        std::count_if(key.begin(), key.end(), [](char c) { return is_hex(c); }));
    if (hex_digits < k_min_uuid_prefix || length == k_uuid_length || !bounded_after) {
      // Too short to identify (also a placeholder such as "GPU-12"), or a whole UUID (done by
      // replace_uuids), or the start of a word ("GPU-accelerated").
      out += text.substr(i, k_prefix_length);
      i = at;
      continue;
    }
    std::string name;
    for (const auto& [uuid, placeholder_name] : m_uuids) {
      if (uuid.starts_with(key) && m_gpu_uuids.contains(uuid)) {
        name = placeholder_name;
        break;
      }
    }
    if (name.empty()) {
      name = placeholder(m_uuids, key, head == "mig-" ? "MIG" : "GPU");
    }
    out += name;
    i = end;
  }
  return out;
}

std::string Redactor::replace_macs(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    // A '-' before a colon-separated MAC is a name's separator ("eth0-02:42:..." leaked); before
    // a dash-separated one it may be part of a longer run of hex groups.
    const bool colon_form = i + 2 < text.size() && text[i + 2] == ':';
    const bool bounded_before = i == 0 || (!is_word_char(text[i - 1]) && text[i - 1] != ':' &&
                                           (text[i - 1] != '-' || colon_form));
    const size_t end = i + k_mac_length;
    const bool bounded_after =
        end >= text.size() || (!is_word_char(text[end]) && text[end] != ':' && text[end] != '-');
    if (bounded_before && is_mac_at(text, i) && bounded_after) {
      std::string key = lower(text.substr(i, k_mac_length));
      std::replace(key.begin(), key.end(), '-', ':');
      out += placeholder(m_macs, key, "mac");
      i = end;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string Redactor::replace_ipv6(std::string_view text) {
  return replace_standalone_runs(
      text, [](char c) { return is_hex(c) || c == ':' || c == '.'; },
      [this](std::string_view run) -> std::optional<std::string> {
        if (!is_ipv6(run)) {
          return std::nullopt;
        }
        return placeholder(m_ipv6, lower(run), "ipv6");
      });
}

std::string Redactor::replace_ipv4(std::string_view text) {
  // "v1.2.3.4" and "libfoo.so.1.2.3.4" are versions: an address stands alone.
  return replace_standalone_runs(
      text, [](char c) { return is_digit(c) || c == '.'; },
      [this](std::string_view run) -> std::optional<std::string> {
        if (!is_ipv4(run) || m_versions.contains(std::string(run))) {
          return std::nullopt;
        }
        return placeholder(m_ipv4, std::string(run), "ipv4");
      });
}

namespace {

/// "scheme://user:secret@host" with the user information replaced by "credentials": a token in a
/// captured variable (a proxy or index URL) must not reach a ticket.
std::string replace_url_credentials(std::string_view text) {
  std::string out;
  size_t from = 0;
  for (size_t scheme = text.find("://"); scheme != std::string_view::npos;
       scheme = text.find("://", scheme + 3)) {
    const size_t start = scheme + 3;
    size_t end = start;
    while (end < text.size() && text[end] != '@' && text[end] != '/' &&
           std::isspace(static_cast<unsigned char>(text[end])) == 0) {
      ++end;
    }
    if (end < text.size() && text[end] == '@' && end > start && start >= from) {
      out.append(text.substr(from, start - from));
      out += "credentials";
      from = end;
    }
  }
  out.append(text.substr(std::min(from, text.size())));
  return out;
}

bool is_token_char(char c) {
  return is_word_char(c) || c == '-' || c == '.';
}

/// A variable or parameter name that holds a secret: "HF_TOKEN", "access_token", "password",
/// "AWS_SECRET_ACCESS_KEY", "api-key".
bool is_secret_name(std::string_view name) {
  const std::string folded = lower(name);
  for (std::string_view part : {"token", "secret", "password", "passwd", "api_key", "apikey",
                                "api-key", "access_key", "credential", "private_key", "auth"}) {
    if (folded.find(part) != std::string::npos) {
      return true;
    }
  }
  return false;
}

/// A word shaped like a well-known access token (GitHub, GitLab, Hugging Face, Slack, PyPI,
/// OpenAI-style keys, AWS access key ids, JSON Web Tokens): its prefix, then at least 16
/// characters of the token's alphabet with a digit among them (random, unlike a word or a
/// path component such as "hf_cache_directory").
bool is_token_shaped(std::string_view word) {
  struct Shape {
    std::string_view prefix;
    std::string_view extra; ///< characters allowed besides letters and digits
    size_t dots;            ///< exactly this many '.' (a JWT's three parts)
  };
  static constexpr std::array<Shape, 17> k_shapes{{{"ghp_", "", 0},
                                                   {"gho_", "", 0},
                                                   {"ghu_", "", 0},
                                                   {"ghs_", "", 0},
                                                   {"ghr_", "", 0},
                                                   {"github_pat_", "_", 0},
                                                   {"glpat-", "-_", 0},
                                                   {"hf_", "", 0},
                                                   {"xoxb-", "-", 0},
                                                   {"xoxp-", "-", 0},
                                                   {"xoxa-", "-", 0},
                                                   {"xoxs-", "-", 0},
                                                   {"sk-", "-_", 0},
                                                   {"pypi-", "-_", 0},
                                                   {"AKIA", "", 0},
                                                   {"ASIA", "", 0},
                                                   {"eyJ", "-_.", 2}}};
  constexpr size_t k_min_random_chars = 16;
  for (const Shape& shape : k_shapes) {
    if (!word.starts_with(shape.prefix)) {
      continue;
    }
    const std::string_view rest = word.substr(shape.prefix.size());
    const bool alphabet = std::all_of(rest.begin(), rest.end(), [&shape](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
             shape.extra.find(c) != std::string_view::npos;
    });
    if (alphabet && rest.size() >= k_min_random_chars &&
        std::any_of(rest.begin(), rest.end(), is_digit) &&
        static_cast<size_t>(std::count(rest.begin(), rest.end(), '.')) == shape.dots) {
      return true;
    }
  }
  return false;
}

} // namespace

std::string Redactor::replace_secrets(std::string_view text) {
  // NAME=value with a secret's name (a variable, a URL's query parameter), "Bearer value", and
  // any word shaped like a known token: the value becomes "secret-N".
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const bool bounded_before = i == 0 || !is_token_char(text[i - 1]);
    if (bounded_before && is_token_char(text[i])) {
      size_t end = i;
      while (end < text.size() && is_token_char(text[end])) {
        ++end;
      }
      while (end > i + 1 && text[end - 1] == '.') {
        --end; // a sentence's full stop
      }
      const std::string_view word = text.substr(i, end - i);
      if (is_token_shaped(word)) {
        out += placeholder(m_secrets, std::string(word), "secret");
        i = end;
        continue;
      }
      const bool assigns = end < text.size() && text[end] == '=' && is_secret_name(word);
      const bool bearer = lower(word) == "bearer" && end < text.size() && text[end] == ' ';
      if (assigns || bearer) {
        size_t value_end = end + 1;
        while (value_end < text.size() &&
               std::isspace(static_cast<unsigned char>(text[value_end])) == 0 &&
               std::string_view("&;,\"'<>").find(text[value_end]) == std::string_view::npos) {
          ++value_end;
        }
        out.append(text.substr(i, end + 1 - i));
        if (value_end > end + 1) {
          out += placeholder(m_secrets, std::string(text.substr(end + 1, value_end - end - 1)),
                             "secret");
        }
        i = value_end;
        continue;
      }
      out.append(word);
      i = end;
      continue;
    }
    out += text[i++];
  }
  return out;
}

std::string Redactor::scrub(std::string_view text) {
  std::string out = replace_url_credentials(text);
  out = replace_secrets(out);
  out = replace_home_users(out);
  out = replace_literals(std::move(out));
  out = replace_uuids(out);
  out = replace_uuid_prefixes(out);
  out = replace_macs(out);
  out = replace_ipv6(out);
  return replace_ipv4(out);
}

Report Redactor::redact(const Report& report) {
  nlohmann::json j = report;
  learn_vocabulary(j);
  learn(report.snapshot);
  collect_versions(j, "", m_versions);
  for_each_string(j, "", [this](std::string& text) { learn_home_users(text); });
  for_each_string(j, "", [this](std::string& text) { text = scrub(text); });
  return j.get<Report>();
}

SystemSnapshot Redactor::redact(const SystemSnapshot& snapshot) {
  nlohmann::json j = snapshot;
  learn_vocabulary(j);
  learn(snapshot);
  collect_versions(j, "", m_versions);
  for_each_string(j, "", [this](std::string& text) { learn_home_users(text); });
  for_each_string(j, "", [this](std::string& text) { text = scrub(text); });
  return j.get<SystemSnapshot>();
}

} // namespace gpucheck::render
