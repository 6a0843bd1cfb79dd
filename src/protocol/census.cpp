#include "protocol/census.hpp"
#include "gpucheck/model/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

namespace gpucheck::protocol {

namespace {

/// The UUID and device minor number from a GPU's information file.
std::pair<std::string, std::string> read_information(const std::filesystem::path& information) {
  std::ifstream in(information);
  std::string line;
  std::string uuid;
  std::string minor;
  for (int n = 0; n < 64 && std::getline(in, line); ++n) {
    if (line.rfind("GPU UUID:", 0) == 0) {
      uuid = trim(line.substr(9));
    } else if (line.rfind("Device Minor:", 0) == 0) {
      minor = trim(line.substr(13));
    }
  }
  return {uuid, minor};
}

bool has_mig_instances(const std::filesystem::path& root, const std::string& minor) {
  if (minor.empty()) {
    return false;
  }
  std::error_code ec;
  const std::filesystem::path dir = root / ("proc/driver/nvidia/capabilities/gpu" + minor) / "mig";
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("gi", 0) == 0) {
      return true;
    }
  }
  return false;
}

bool is_number(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

template <typename T> std::optional<T> number(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number_unsigned()) {
    return j[key].get<T>();
  }
  return std::nullopt;
}

std::string text(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}
} // namespace

std::string normal_bus_id(std::string bus_id) {
  return lower(std::move(bus_id));
}

std::vector<HostGpu> driver_gpus(const std::string& sysroot) {
  std::vector<HostGpu> gpus;
  const std::filesystem::path root(sysroot.empty() ? "/" : sysroot);
  const std::filesystem::path dir = root / "proc/driver/nvidia/gpus";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    HostGpu gpu;
    gpu.bus_id = lower(it->path().filename().string());
    const auto [uuid, minor] = read_information(it->path() / "information");
    gpu.uuid = uuid;
    gpu.mig = has_mig_instances(root, minor);
    gpus.push_back(std::move(gpu));
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const HostGpu& a, const HostGpu& b) { return a.bus_id < b.bus_id; });
  return gpus;
}

std::vector<VisibleGpu> visible_gpus(const std::vector<HostGpu>& gpus,
                                     const std::optional<std::string>& cuda_visible_devices) {
  std::vector<VisibleGpu> out;
  const auto with_uuid = [](const HostGpu& gpu) {
    return VisibleGpu{gpu, gpu.uuid.empty() ? std::string() : gpu.uuid};
  };
  if (!cuda_visible_devices) {
    for (const HostGpu& gpu : gpus) {
      out.push_back(with_uuid(gpu));
    }
    return out;
  }
  std::string entry;
  std::vector<std::string> entries;
  for (const char c : *cuda_visible_devices + ",") {
    if (c == ',') {
      entries.emplace_back(trim(entry));
      entry.clear();
    } else {
      entry += c;
    }
  }
  for (const std::string& e : entries) {
    if (is_number(e)) {
      const size_t index = std::stoul(e.substr(0, 6));
      if (index >= gpus.size()) {
        break;
      }
      out.push_back(with_uuid(gpus[index]));
    } else if (e.rfind("MIG-", 0) == 0) {
      out.push_back(VisibleGpu{HostGpu{{}, e}, e});
    } else if (e.rfind("GPU-", 0) == 0) {
      std::vector<const HostGpu*> matches;
      for (const HostGpu& gpu : gpus) {
        if (!gpu.uuid.empty() && lower(gpu.uuid).rfind(lower(e), 0) == 0) {
          matches.push_back(&gpu);
        }
      }
      if (matches.size() != 1) {
        break;
      }
      out.push_back(with_uuid(*matches.front()));
    } else {
      break;
    }
  }
  // CUDA lists a GPU once even when the list names it twice.
  std::vector<VisibleGpu> unique;
  for (VisibleGpu& v : out) {
    if (std::none_of(unique.begin(), unique.end(), [&v](const VisibleGpu& u) {
          return u.visible_devices == v.visible_devices && u.gpu.bus_id == v.gpu.bus_id;
        })) {
      unique.push_back(std::move(v));
    }
  }
  return unique;
}

const CensusGpu* Census::find(const HostGpu& gpu) const {
  for (const CensusGpu& g : gpus) {
    if ((!gpu.uuid.empty() && g.uuid == gpu.uuid) ||
        (!gpu.bus_id.empty() && lower(g.bus_id) == lower(gpu.bus_id))) {
      return &g;
    }
  }
  return nullptr;
}

nlohmann::json census_to_json(const Census& census) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const CensusGpu& g : census.gpus) {
    nlohmann::json processes = nlohmann::json::array();
    for (const CensusProcess& p : g.processes) {
      nlohmann::json entry{{"pid", p.pid}, {"name", p.name}};
      if (p.used_bytes) {
        entry["used_bytes"] = *p.used_bytes;
      }
      processes.push_back(std::move(entry));
    }
    nlohmann::json gpu{{"uuid", g.uuid}, {"bus_id", g.bus_id}, {"processes", processes}};
    if (g.free_bytes) {
      gpu["free_bytes"] = *g.free_bytes;
    }
    if (g.total_bytes) {
      gpu["total_bytes"] = *g.total_bytes;
    }
    gpus.push_back(std::move(gpu));
  }
  return {{"error", census.error}, {"gpus", gpus}};
}

Census census_from_json(const nlohmann::json& json) {
  Census census;
  census.error = text(json, "error");
  if (!json.is_object() || !json.contains("gpus") || !json["gpus"].is_array()) {
    if (census.error.empty()) {
      census.error = "the census reported no GPU list";
    }
    return census;
  }
  for (const nlohmann::json& g : json["gpus"]) {
    CensusGpu gpu;
    gpu.uuid = text(g, "uuid");
    gpu.bus_id = lower(text(g, "bus_id"));
    gpu.free_bytes = number<uint64_t>(g, "free_bytes");
    gpu.total_bytes = number<uint64_t>(g, "total_bytes");
    if (g.is_object() && g.contains("processes") && g["processes"].is_array()) {
      for (const nlohmann::json& p : g["processes"]) {
        CensusProcess process;
        process.pid = number<uint32_t>(p, "pid").value_or(0);
        process.name = text(p, "name");
        process.used_bytes = number<uint64_t>(p, "used_bytes");
        gpu.processes.push_back(std::move(process));
      }
    }
    census.gpus.push_back(std::move(gpu));
  }
  return census;
}

std::string describe_processes(const std::vector<CensusProcess>& processes) {
  std::string out;
  for (const CensusProcess& p : processes) {
    out += out.empty() ? "" : ", ";
    out += p.name.empty() ? std::to_string(p.pid) : fmt::format("{} ({})", p.pid, p.name);
  }
  return out;
}

} // namespace gpucheck::protocol
