#include "probes/host_text.hpp"
#include "gpucheck/model/text.hpp"

#include <charconv>
#include <sstream>

namespace gpucheck::probes {

namespace {

std::string unquote(std::string value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      ++i;
    }
    out += value[i];
  }
  return out;
}

/// "key : value" lines (cpuinfo) or "KEY=value" lines (os-release): calls f(key, value).
template <typename F> void for_each_pair(std::string_view text, char separator, F&& f) {
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    const size_t at = line.find(separator);
    if (at == std::string::npos) {
      continue;
    }
    f(std::string(trim(std::string_view(line).substr(0, at))),
      std::string(trim(std::string_view(line).substr(at + 1))));
  }
}

} // namespace

std::string parse_os_release_pretty_name(std::string_view text) {
  std::string pretty, name, version;
  for_each_pair(text, '=', [&](const std::string& key, const std::string& value) {
    if (key == "PRETTY_NAME") {
      pretty = unquote(value);
    } else if (key == "NAME") {
      name = unquote(value);
    } else if (key == "VERSION") {
      version = unquote(value);
    }
  });
  if (!pretty.empty()) {
    return pretty;
  }
  return version.empty() ? name : name + " " + version;
}

CpuSummary parse_cpuinfo(std::string_view text) {
  CpuSummary out;
  std::string model_name, arm_model, hardware, cpu_part;
  for_each_pair(text, ':', [&](const std::string& key, const std::string& value) {
    if (key == "processor") {
      ++out.count;
    } else if (key == "model name" && model_name.empty()) {
      model_name = value;
    } else if (key == "Model" && arm_model.empty()) {
      arm_model = value;
    } else if (key == "Hardware" && hardware.empty()) {
      hardware = value;
    } else if (key == "CPU part" && cpu_part.empty()) {
      cpu_part = value;
    }
  });
  for (const std::string* candidate : {&model_name, &arm_model, &hardware}) {
    if (!candidate->empty()) {
      out.model = *candidate;
      return out;
    }
  }
  if (!cpu_part.empty()) {
    out.model = "CPU part " + cpu_part;
  }
  return out;
}

std::optional<uint64_t> parse_meminfo_total_bytes(std::string_view text) {
  std::optional<uint64_t> out;
  for_each_pair(text, ':', [&](const std::string& key, const std::string& value) {
    if (key != "MemTotal" || out) {
      return;
    }
    uint64_t amount = 0;
    const char* first = value.data();
    const char* last = first + value.size();
    const auto [ptr, ec] = std::from_chars(first, last, amount);
    if (ec != std::errc()) {
      return;
    }
    const std::string unit(trim(std::string_view(ptr, static_cast<size_t>(last - ptr))));
    if (unit == "kB") {
      out = amount * 1024;
    } else if (unit.empty()) {
      out = amount;
    }
  });
  return out;
}

} // namespace gpucheck::probes
