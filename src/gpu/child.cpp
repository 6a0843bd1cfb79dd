#include "gpu/child.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>

#include "gpu/cuda_call.hpp"
#include "platform/cuda_api.hpp"
#include "process/trace.hpp"

namespace gpucheck::gpu {

namespace {
std::string& stage_storage() {
  static std::string stage = "start";
  return stage;
}
using TimelineClock = std::chrono::steady_clock;
TimelineClock::time_point& child_start() {
  static TimelineClock::time_point start = TimelineClock::now();
  return start;
}
/// (stage, milliseconds since the child started) at each stage change: where the time goes.
nlohmann::json& timeline() {
  static nlohmann::json entries = nlohmann::json::array();
  return entries;
}
/// (stage, resident MiB) at each stage change: where host memory goes.
nlohmann::json& rss_timeline() {
  static nlohmann::json entries = nlohmann::json::array();
  return entries;
}
} // namespace

namespace {
/// GPUCHECK_TRACE: the largest contributors to resident memory at the child's end, by mapping
/// (a file's path, or "[anon]" for private memory with no file), from /proc/self/smaps.
nlohmann::json resident_by_mapping() {
  std::ifstream smaps("/proc/self/smaps");
  std::map<std::string, std::pair<double, double>> by_name; // name -> (Rss, Anonymous) KiB
  std::string line;
  std::string name;
  while (std::getline(smaps, line)) {
    if (line.empty()) {
      continue;
    }
    const bool header = std::isxdigit(static_cast<unsigned char>(line[0])) != 0 &&
                        line.find('-') != std::string::npos && line.find(':') > line.find(' ');
    if (header) {
      // "start-end perms offset dev inode [path]": the path is the sixth field.
      size_t pos = 0;
      for (int field = 0; field < 5 && pos != std::string::npos; ++field) {
        pos = line.find_first_not_of(' ', line.find(' ', pos));
      }
      name = pos == std::string::npos ? "[anon]" : line.substr(pos);
      continue;
    }
    for (const auto& [key, second] : {std::pair{"Rss:", false}, std::pair{"Anonymous:", true}}) {
      if (line.starts_with(key)) {
        const double kib = std::strtod(line.c_str() + std::strlen(key), nullptr);
        auto& entry = by_name[name];
        (second ? entry.second : entry.first) += kib;
      }
    }
  }
  std::vector<std::pair<std::string, std::pair<double, double>>> sorted(by_name.begin(),
                                                                        by_name.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  nlohmann::json top = nlohmann::json::array();
  for (size_t i = 0; i < sorted.size() && i < 12; ++i) {
    top.push_back({sorted[i].first, std::round(sorted[i].second.first / 1024.0),
                   std::round(sorted[i].second.second / 1024.0)});
  }
  return top;
}
} // namespace

namespace {
thread_local bool t_stages_off = false;
thread_local std::string t_lane;       ///< a lane's name ("" on the main thread)
thread_local std::string t_lane_stage; ///< a lane's own stage
std::mutex& timeline_lock() {
  static std::mutex lock;
  return lock;
}
} // namespace

void stages_off_on_this_thread() {
  t_stages_off = true;
}

void own_stages_on_this_thread(std::string lane) {
  t_lane = std::move(lane);
  t_lane_stage = "start";
}

void set_stage(std::string stage) {
  if (t_stages_off) {
    return;
  }
  const std::string label = t_lane.empty() ? stage : t_lane + ": " + stage;
  const double mib = resident_mib();
  const std::lock_guard<std::mutex> guard(timeline_lock());
  timeline().push_back(nlohmann::json::array(
      {label,
       std::chrono::duration<double, std::milli>(TimelineClock::now() - child_start()).count()}));
  rss_timeline().push_back(nlohmann::json::array({label, mib}));
  (t_lane.empty() ? stage_storage() : t_lane_stage) = std::move(stage);
}
void write_timeline(nlohmann::json& out) {
  const std::lock_guard<std::mutex> guard(timeline_lock());
  out["timeline_ms"] = timeline();
  out["timeline_rss_mib"] = rss_timeline();
}

const std::string& current_stage() {
  return t_lane.empty() ? stage_storage() : t_lane_stage;
}

bool fault_planted(std::string_view what) {
  const char* value = std::getenv("GPUCHECK_PLANT_FAULT");
  return value != nullptr && what == value;
}

std::chrono::milliseconds long_level_duration() {
  const char* text = std::getenv("GPUCHECK_LONG_DURATION_MS");
  if (text != nullptr) {
    char* end = nullptr;
    const long long ms = std::strtoll(text, &end, 10);
    if (end != text && *end == '\0' && ms > 0) {
      return std::chrono::milliseconds(ms);
    }
  }
  return std::chrono::milliseconds(10000);
}

double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0;
  uint64_t resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

nlohmann::json metric(std::string name, double value, std::string unit, std::string note) {
  return protocol::to_json(
      protocol::PayloadMetric{std::move(name), value, std::move(unit), std::move(note)});
}

std::optional<protocol::PayloadFailure> failure_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const CudaCallError& e) {
    protocol::PayloadFailure failure;
    failure.stage = current_stage();
    failure.call = e.call();
    failure.code = e.code();
    failure.name = e.code() == -1 ? "symbol missing" : cuda_error_name(e.code());
    failure.text = e.code() == -1 ? "not exported by this libcuda" : cuda_error_text(e.code());
    failure.message = e.what();
    return failure;
  } catch (const std::exception& e) {
    protocol::PayloadFailure failure;
    failure.stage = current_stage();
    failure.message = e.what();
    return failure;
  }
  return std::nullopt;
}

nlohmann::json peak_rss_metric() {
  rusage usage{};
  const double mib =
      ::getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<double>(usage.ru_maxrss) / 1024.0 : 0.0;
  return metric("host_peak_rss_mib", mib, "MiB", "gpucheck child, peak resident");
}

nlohmann::json run_gpu_child(const std::vector<std::string>& args,
                             const std::function<void(int ordinal, nlohmann::json& out)>& body) {
  child_start() = TimelineClock::now();
  nlohmann::json out = nlohmann::json::object();
  out["metrics"] = nlohmann::json::array();
  out["verify"] = nlohmann::json::array();
  int ordinal = 0;
  try {
    ordinal = args.empty() ? 0 : std::stoi(args[0]);
  } catch (const std::exception&) {
    protocol::PayloadFailure failure;
    failure.stage = "arguments";
    failure.message = "bad device ordinal";
    out["failure"] = protocol::to_json(failure);
    return out;
  }
  if (const auto failure = failure_of([&] { body(ordinal, out); })) {
    out["failure"] = protocol::to_json(*failure);
  }
  set_stage("done");
  write_timeline(out);
  out["metrics"].push_back(peak_rss_metric());
  // What that resident memory is at the end: private (anonymous) pages, and pages of mapped
  // files (libraries: clean, shared with every other process that maps them, reclaimable).
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    for (const auto& [key, name] :
         {std::pair{"RssAnon:", "host_rss_anon_mib"}, std::pair{"RssFile:", "host_rss_file_mib"}}) {
      if (line.starts_with(key)) {
        const double kib = std::strtod(line.c_str() + std::strlen(key), nullptr);
        out["metrics"].push_back(
            metric(name, kib / 1024.0, "MiB", "gpucheck child at its end, before exit"));
      }
    }
  }
  if (process::tracing()) {
    out["rss_by_mapping_mib"] = resident_by_mapping(); // [name, resident, of which anonymous]
  }
  return out;
}

} // namespace gpucheck::gpu
