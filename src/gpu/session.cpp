#include "gpu/session.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "kernels/gpucheck_values.h"
#include "process/trace.hpp"
#include "protocol/messages.hpp"

namespace gpucheck::platform::gpu {

CudaCallError::CudaCallError(std::string call, int code)
    : std::runtime_error(code == -1 ? fmt::format("{}: symbol missing from libcuda", call)
                                    : fmt::format("{} returned {} ({})", call,
                                                  cuda_error_name(code), cuda_error_text(code))),
      m_call(std::move(call)), m_code(code) {}

void check_cu(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) {
    throw CudaCallError(call, static_cast<int>(result));
  }
}

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
constexpr uint64_t k_budget_cap_bytes = 1ULL << 30;
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
} // namespace

void stages_off_on_this_thread() {
  t_stages_off = true;
}

void set_stage(std::string stage) {
  if (t_stages_off) {
    return;
  }
  timeline().push_back(nlohmann::json::array(
      {stage,
       std::chrono::duration<double, std::milli>(TimelineClock::now() - child_start()).count()}));
  rss_timeline().push_back(nlohmann::json::array({stage, resident_mib()}));
  stage_storage() = std::move(stage);
}
void write_timeline(nlohmann::json& out) {
  out["timeline_ms"] = timeline();
  out["timeline_rss_mib"] = rss_timeline();
}

const std::string& current_stage() {
  return stage_storage();
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

uint64_t memory_budget(uint64_t free_bytes) {
  return std::min(k_budget_cap_bytes, free_bytes / 10);
}

DeviceSession::DeviceSession(int ordinal, int connections)
    : m_ordinal(ordinal), m_connections(connections) {
  set_stage("driver");
  // Read by the driver when it builds the context: 8 queues (the default) take twice as long
  // to build and tear down as one (docs/performance.md).
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(connections).c_str(), 1);
  m_lib = DynamicLibrary::open("libcuda.so.1");
  if (!m_lib.loaded()) {
    throw std::runtime_error("cannot load libcuda.so.1: " + m_lib.load().error);
  }
  m_api = load_cuda_api(m_lib);
  if (!m_api.usable) {
    throw std::runtime_error("libcuda.so.1 lacks required driver API symbols");
  }
  GPUCHECK_CU(m_api, cuInit, 0U);
  GPUCHECK_CU(m_api, cuDriverGetVersion, &m_driver_version);
  GPUCHECK_CU(m_api, cuDeviceGet, &m_device, ordinal);
  char name[256] = {};
  GPUCHECK_CU(m_api, cuDeviceGetName, name, static_cast<int>(sizeof name), m_device);
  m_name = name;
  m_cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  m_cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  m_sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1);
  char bus[64] = {};
  if (m_api.cuDeviceGetPCIBusId != nullptr &&
      m_api.cuDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), m_device) == CUDA_SUCCESS) {
    m_pci_bus_id = bus;
  }
  // The engine's plan says when this child may build its context and how much device memory
  // its buffers may take (docs/architecture.md, "The GPU engine").
  set_stage("waiting to create the context");
  m_allowance_bytes = engine::gate::await_setup();
  set_stage("context");
  GPUCHECK_CU(m_api, cuDevicePrimaryCtxRetain, &m_context, m_device);
  GPUCHECK_CU(m_api, cuCtxSetCurrent, m_context);
  shrink_reservations();
  read_free_memory();
  m_free_after_context = m_free_bytes;
  engine::gate::context_built();
}

void DeviceSession::read_free_memory() {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  GPUCHECK_CU(m_api, cuMemGetInfo, &free_bytes, &total_bytes);
  m_free_bytes = free_bytes;
  m_budget_bytes = memory_budget(free_bytes);
  if (m_allowance_bytes) {
    m_budget_bytes = std::min<uint64_t>(m_budget_bytes, *m_allowance_bytes);
  }
}

void DeviceSession::shrink_reservations() {
  // A context reserves local memory for every thread the GPU can hold at the default stack of
  // 1 KiB (on an H200 about 260 of its 523 MiB); gpucheck's kernels need almost none, and the
  // driver grows the reservation at a launch that needs more (cuDNN's). Measured on an H200:
  // 523 MiB per context by default, 325 with a 256-byte stack, 262 with 16 (docs/performance.md).
  if (m_api.cuCtxSetLimit == nullptr) {
    return;
  }
  constexpr size_t k_stack_bytes = 16;
  constexpr size_t k_printf_fifo_bytes = 4096;
  constexpr size_t k_malloc_heap_bytes = 1U << 20;
  m_api.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, k_stack_bytes);
  m_api.cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, k_printf_fifo_bytes);
  m_api.cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, k_malloc_heap_bytes);
}

void DeviceSession::make_current() const {
  GPUCHECK_CU(m_api, cuCtxSetCurrent, m_context);
}

void DeviceSession::wait_for_gate() {
  set_stage("waiting for the GPU");
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if (m_api.cuMemGetInfo != nullptr && m_api.cuMemGetInfo(&free_bytes, &total_bytes) == 0 &&
      free_bytes < m_free_after_context) {
    // What its preparation took on the device (on an idle GPU): the plan's memory model.
    m_prepare_used_bytes = m_free_after_context - free_bytes;
  }
  engine::gate::ready_and_wait();
  set_stage("released");
  read_free_memory();
}

void DeviceSession::wait_for_quiet_host() const {
  set_stage("waiting for gpucheck's probes");
  engine::gate::pause_for_quiet_host();
}

void DeviceSession::done_with_gpu() {
  if (m_work_said_done) {
    return;
  }
  m_work_said_done = true;
  set_stage("done with the GPU");
  if (m_works_left > 1) {
    engine::gate::work_done();
  } else {
    engine::gate::done();
  }
}

void DeviceSession::end_work() {
  if (!m_work_said_done) {
    // It failed before saying so: the parent moves on to the next work (or the teardown).
    m_work_said_done = true;
    if (m_works_left > 1) {
      engine::gate::work_done();
    } else {
      engine::gate::done();
    }
  }
  m_works_left = std::max(1, m_works_left - 1);
  m_work_said_done = false;
}

std::optional<std::string> DeviceSession::context_error() const {
  if (m_api.cuCtxSynchronize == nullptr) {
    return std::nullopt;
  }
  const CUresult result = m_api.cuCtxSynchronize();
  if (result == CUDA_SUCCESS) {
    return std::nullopt;
  }
  return cuda_error_name(static_cast<int>(result));
}

DeviceSession::~DeviceSession() {
  if (std::uncaught_exceptions() == 0) { // else keep the stage a failure is reported with
    set_stage("context teardown");
  }
  engine::gate::done(); // a child that failed before its own call: the next may go now
  if (m_context != nullptr && m_api.cuDevicePrimaryCtxRelease != nullptr) {
    m_api.cuDevicePrimaryCtxRelease(m_device);
  }
}

int DeviceSession::attribute(CUdevice_attribute attribute, int fallback) const {
  int value = 0;
  if (m_api.cuDeviceGetAttribute(&value, attribute, m_device) != CUDA_SUCCESS) {
    return fallback;
  }
  return value;
}

engine::DeviceDescription DeviceSession::description() const {
  engine::DeviceDescription d;
  d.ordinal = m_ordinal;
  d.name = m_name;
  d.cc_major = m_cc_major;
  d.cc_minor = m_cc_minor;
  d.sm_count = m_sm_count;
  d.pci_bus_id = m_pci_bus_id;
  d.free_bytes = m_free_bytes;
  d.budget_bytes = m_budget_bytes;
  d.driver = m_driver_version;
  d.connections = m_connections;
  d.prepare_used_bytes = m_prepare_used_bytes;
  return d;
}

nlohmann::json DeviceSession::describe() const {
  return engine::to_json(description());
}

DeviceBuffer::DeviceBuffer(const DeviceSession& session, uint64_t bytes)
    : m_api(&session.api()), m_bytes(bytes) {
  GPUCHECK_CU(*m_api, cuMemAlloc, &m_ptr, static_cast<size_t>(bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (m_ptr != 0 && m_api->cuMemFree != nullptr) {
    m_api->cuMemFree(m_ptr);
  }
}

PinnedBuffer::PinnedBuffer(const DeviceSession& session, uint64_t bytes, unsigned flags)
    : m_api(&session.api()), m_bytes(bytes) {
  GPUCHECK_CU(*m_api, cuMemHostAlloc, &m_ptr, static_cast<size_t>(bytes), flags);
}

PinnedBuffer::~PinnedBuffer() {
  if (m_ptr != nullptr && m_api->cuMemFreeHost != nullptr) {
    m_api->cuMemFreeHost(m_ptr);
  }
}

Stream::Stream(const DeviceSession& session, std::optional<int> priority) : m_api(&session.api()) {
  if (priority) {
    GPUCHECK_CU(*m_api, cuStreamCreateWithPriority, &m_stream,
                static_cast<unsigned>(CU_STREAM_NON_BLOCKING), *priority);
  } else {
    GPUCHECK_CU(*m_api, cuStreamCreate, &m_stream, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  }
}

Stream::~Stream() {
  if (m_stream != nullptr && m_api->cuStreamDestroy != nullptr) {
    m_api->cuStreamDestroy(m_stream);
  }
}

void Stream::synchronize() const {
  GPUCHECK_CU(*m_api, cuStreamSynchronize, m_stream);
}

Event::Event(const DeviceSession& session) : m_api(&session.api()) {
  GPUCHECK_CU(*m_api, cuEventCreate, &m_event, static_cast<unsigned>(CU_EVENT_DEFAULT));
}

Event::~Event() {
  if (m_event != nullptr && m_api->cuEventDestroy != nullptr) {
    m_api->cuEventDestroy(m_event);
  }
}

void Event::record(CUstream stream) const {
  GPUCHECK_CU(*m_api, cuEventRecord, m_event, stream);
}

double elapsed_ms(const CudaApi& api, const Event& start, const Event& end) {
  GPUCHECK_CU(api, cuEventSynchronize, end.get());
  float ms = 0.0F;
  GPUCHECK_CU(api, cuEventElapsedTime, &ms, start.get(), end.get());
  return ms;
}

double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0;
  uint64_t resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

void parallel_for(uint64_t n, const std::function<void(uint64_t, uint64_t)>& body,
                  uint64_t min_parallel) {
  constexpr uint64_t k_max_threads = 8;
  const uint64_t threads =
      std::clamp<uint64_t>(std::thread::hardware_concurrency(), 1, k_max_threads);
  if (threads == 1 || n < min_parallel) {
    body(0, n);
    return;
  }
  std::vector<std::thread> workers;
  const uint64_t step = (n + threads - 1) / threads;
  for (uint64_t lo = 0; lo < n; lo += step) {
    workers.emplace_back(body, lo, std::min(n, lo + step));
  }
  for (std::thread& worker : workers) {
    worker.join();
  }
}

void add_mismatches(Mismatches& total, const Mismatches& mine, std::mutex& lock) {
  if (mine.count != 0) {
    const std::lock_guard<std::mutex> guard(lock);
    total.count += mine.count;
    total.first = std::min(total.first, mine.first);
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

nlohmann::json metric(std::string name, double value, std::string unit, std::string note) {
  return engine::to_json(
      engine::PayloadMetric{std::move(name), value, std::move(unit), std::move(note)});
}

std::optional<engine::PayloadFailure> failure_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const CudaCallError& e) {
    engine::PayloadFailure failure;
    failure.stage = current_stage();
    failure.call = e.call();
    failure.code = e.code();
    failure.name = e.code() == -1 ? "symbol missing" : cuda_error_name(e.code());
    failure.text = e.code() == -1 ? "not exported by this libcuda" : cuda_error_text(e.code());
    failure.message = e.what();
    return failure;
  } catch (const std::exception& e) {
    engine::PayloadFailure failure;
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
    engine::PayloadFailure failure;
    failure.stage = "arguments";
    failure.message = "bad device ordinal";
    out["failure"] = engine::to_json(failure);
    return out;
  }
  if (const auto failure = failure_of([&] { body(ordinal, out); })) {
    out["failure"] = engine::to_json(*failure);
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

uint64_t SplitMix64::next() {
  uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

float SplitMix64::uniform(float lo, float hi) {
  const double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;
  return static_cast<float>(lo + (hi - lo) * unit);
}

uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device() ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

uint32_t pattern_word(uint64_t index, uint32_t seed) {
  return gpucheck_pattern_word(index, seed);
}

} // namespace gpucheck::platform::gpu
