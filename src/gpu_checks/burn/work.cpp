// The long level's sustained load (work "burn", check gpu.burn): square GEMMs through cuBLAS
// (dlopened, on the driver API's primary context like cuDNN) in every type the GPU's tensor
// cores and CUDA cores take (BF16, FP16, FP32 without TF32, FP64), back to back for --duration,
// each iteration's result compared bit for bit with the first one's on the GPU (cuBLAS gives
// the same bits run to run on GPUs of one architecture and SM count: its documentation,
// "Results reproducibility"), as gpu-burn compares. Beside it a thread samples NVML every
// 100 ms (clocks, temperature, power, clock-event reasons) and waits on NVML's Xid events.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/burn/burn.hpp"
#include "kernels/gpucheck_values.h"
#include "platform/dynlib.hpp"
#include "platform/nvml_api.hpp"
#include "protocol/messages.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::burn {

using namespace gpucheck::gpu; // the child side: sessions, streams, cuda_call, stages

// The burn's watch reads NVML through the platform's dlopened table (platform/nvml_api.hpp).
using platform::k_nvml_clock_mem;
using platform::k_nvml_clock_sm;
using platform::k_nvml_event_xid;
using platform::k_nvml_success;
using platform::k_nvml_temperature_gpu;
using platform::load_nvml_api;
using platform::nvml_error_name;
using platform::NvmlApi;
using platform::nvmlDevice_t;
using platform::nvmlEventData_t;
using platform::nvmlEventSet_t;
using platform::nvmlPciInfo_t;

namespace {
using Clock = std::chrono::steady_clock;
constexpr unsigned k_block = 256;
constexpr uint64_t k_mib = 1ULL << 20;
constexpr int k_batch = 8;                 // iterations between two looks at the clock, at most
constexpr double k_batch_s = 0.2;          // a batch's length, at most (a slow GPU: fewer)
constexpr uint32_t k_input_seed = 0x5EEDU; // the same inputs on every GPU: results comparable
constexpr int k_cublas_op_n = 0;
constexpr int k_cublas_gemm_default = -1;
constexpr int k_cuda_r_32f = 0;
constexpr int k_cuda_r_64f = 1;
constexpr int k_cuda_r_16f = 2;
constexpr int k_cuda_r_16bf = 14;
constexpr int k_cublas_compute_32f = 68;
constexpr int k_cublas_compute_64f = 70;

/// The cuBLAS entries the burn uses, by dlsym.
struct Cublas {
  DynamicLibrary lib;
  int (*create)(void**) = nullptr;
  int (*destroy)(void*) = nullptr;
  int (*set_stream)(void*, CUstream) = nullptr;
  int (*gemm_ex)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*,
                 int, int, const void*, void*, int, int, int, int) = nullptr;
  int (*get_property)(int, int*) = nullptr;
  const char* (*status_name)(int) = nullptr;

  Cublas() : lib(DynamicLibrary::open_first({"libcublas.so.13", "libcublas.so.12"})) {
    create = lib.function<decltype(create)>("cublasCreate_v2", true);
    destroy = lib.function<decltype(destroy)>("cublasDestroy_v2", true);
    set_stream = lib.function<decltype(set_stream)>("cublasSetStream_v2", true);
    gemm_ex = lib.function<decltype(gemm_ex)>("cublasGemmEx", true);
    get_property = lib.function<decltype(get_property)>("cublasGetProperty", false);
    status_name = lib.function<decltype(status_name)>("cublasGetStatusName", false);
  }
  [[nodiscard]] bool usable() const {
    return create != nullptr && destroy != nullptr && set_stream != nullptr && gemm_ex != nullptr;
  }
  void check(int status, const char* call) const {
    if (status != 0) {
      throw CudaCallError(
          fmt::format("{} ({})", call,
                      status_name != nullptr ? status_name(status) : fmt::format("{}", status)),
          status);
    }
  }
  [[nodiscard]] std::string version() const {
    int major = 0;
    int minor = 0;
    int patch = 0;
    if (get_property == nullptr || get_property(0, &major) != 0 || get_property(1, &minor) != 0 ||
        get_property(2, &patch) != 0) {
      return "";
    }
    return fmt::format("{}.{}.{}", major, minor, patch);
  }
};

struct GemmType {
  std::string name;  ///< bf16, fp16, fp32, fp64
  int data_type = 0; ///< cudaDataType
  int compute = 0;   ///< cublasComputeType_t
  uint32_t fill = 0; ///< GpucheckValueType
  uint64_t element_bytes = 0;
};

/// The types this GPU computes: tensor-core BF16 from sm_80, FP16 from sm_70, FP32 and FP64.
std::vector<GemmType> types_for(int cc_major) {
  std::vector<GemmType> types;
  if (cc_major >= 8) {
    types.push_back({"bf16", k_cuda_r_16bf, k_cublas_compute_32f, gpucheck_bf16, 2});
  }
  if (cc_major >= 7) {
    types.push_back({"fp16", k_cuda_r_16f, k_cublas_compute_32f, gpucheck_fp16, 2});
  }
  types.push_back({"fp32", k_cuda_r_32f, k_cublas_compute_32f, gpucheck_fp32, 4});
  types.push_back({"fp64", k_cuda_r_64f, k_cublas_compute_64f, gpucheck_fp64, 8});
  return types;
}

/// NVML's view of the GPU during the burn, from a thread of its own.
class Watch {
public:
  explicit Watch(const std::string& bus_id) {
    m_lib = DynamicLibrary::open("libnvidia-ml.so.1");
    m_api = load_nvml_api(m_lib);
    if (!m_api.usable || m_api.nvmlInit() != k_nvml_success) {
      m_why = m_lib.loaded() ? "nvmlInit failed" : "libnvidia-ml.so.1 could not be loaded";
      m_xid_why = m_why;
      return;
    }
    m_initialised = true;
    unsigned count = 0;
    m_api.nvmlDeviceGetCount(&count);
    // CUDA writes "0000:3B:00.0", NVML "00000000:3B:00.0": compared as numbers.
    unsigned domain = 0;
    unsigned bus = 0;
    unsigned dev = 0;
    const bool parsed = std::sscanf(bus_id.c_str(), "%x:%x:%x", &domain, &bus, &dev) == 3;
    for (unsigned i = 0; parsed && i < count && m_device == nullptr; ++i) {
      nvmlDevice_t device = nullptr;
      nvmlPciInfo_t pci{};
      if (m_api.nvmlDeviceGetHandleByIndex(i, &device) == k_nvml_success &&
          m_api.nvmlDeviceGetPciInfo != nullptr &&
          m_api.nvmlDeviceGetPciInfo(device, &pci) == k_nvml_success && pci.domain == domain &&
          pci.bus == bus && pci.device == dev) {
        m_device = device;
      }
    }
    if (m_device == nullptr) {
      m_why = fmt::format("NVML lists no GPU at {}", bus_id);
      m_xid_why = m_why;
      return;
    }
    if (m_api.nvmlDeviceGetMaxClockInfo != nullptr) {
      m_api.nvmlDeviceGetMaxClockInfo(m_device, k_nvml_clock_sm, &m_max_sm);
    }
    if (m_api.nvmlEventSetCreate == nullptr || m_api.nvmlDeviceRegisterEvents == nullptr ||
        m_api.nvmlEventSetWait == nullptr) {
      m_xid_why = "this NVML has no event API";
    } else if (const int rc = m_api.nvmlEventSetCreate(&m_events); rc != k_nvml_success) {
      m_xid_why = fmt::format("nvmlEventSetCreate: {}", nvml_error_name(rc));
      m_events = nullptr;
    } else if (const int reg = m_api.nvmlDeviceRegisterEvents(m_device, k_nvml_event_xid, m_events);
               reg != k_nvml_success) {
      m_xid_why = fmt::format("nvmlDeviceRegisterEvents: {}", nvml_error_name(reg));
    } else {
      m_xid_ready = true;
    }
  }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
  ~Watch() {
    stop();
    if (m_events != nullptr && m_api.nvmlEventSetFree != nullptr) {
      m_api.nvmlEventSetFree(m_events);
    }
    if (m_initialised && m_api.nvmlShutdown != nullptr) {
      m_api.nvmlShutdown();
    }
  }

  void start() {
    if (m_device == nullptr) {
      return;
    }
    m_start = Clock::now();
    m_thread = std::thread([this] {
      stages_off_on_this_thread();
      while (!m_stop.load()) {
        if (m_xid_ready) {
          nvmlEventData_t data{};
          const int rc = m_api.nvmlEventSetWait(m_events, &data, 100);
          if (rc == k_nvml_success && (data.eventType & k_nvml_event_xid) != 0) {
            const std::lock_guard<std::mutex> guard(m_lock);
            m_xids.push_back({since_start(), static_cast<int>(data.eventData)});
          }
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        sample();
      }
    });
  }

  void stop() {
    m_stop.store(true);
    if (m_thread.joinable()) {
      m_thread.join();
    }
  }

  [[nodiscard]] protocol::BurnWatch watch() const {
    protocol::BurnWatch w;
    w.available = m_device != nullptr;
    w.why = m_why;
    w.period_ms = 100;
    w.t_ms = m_t;
    w.sm_mhz.assign(m_sm.begin(), m_sm.end());
    w.mem_mhz.assign(m_mem.begin(), m_mem.end());
    w.temp_c.assign(m_temp.begin(), m_temp.end());
    w.power_w = m_power;
    w.reasons.assign(m_reasons.begin(), m_reasons.end());
    w.max_sm_mhz = static_cast<int>(m_max_sm);
    return w;
  }
  [[nodiscard]] std::string xid_watch() const {
    return m_xid_ready ? "nvml" : "unavailable: " + m_xid_why;
  }
  [[nodiscard]] std::vector<protocol::BurnXid> xids() const {
    const std::lock_guard<std::mutex> guard(m_lock);
    return m_xids;
  }

private:
  [[nodiscard]] int64_t since_start() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - m_start).count();
  }
  void sample() {
    unsigned sm = 0;
    unsigned mem = 0;
    unsigned temp = 0;
    unsigned power = 0;
    unsigned long long reasons = 0;
    const auto ok = [](auto fn, auto... args) { return fn != nullptr && fn(args...) == 0; };
    const bool any = ok(m_api.nvmlDeviceGetClockInfo, m_device, k_nvml_clock_sm, &sm);
    ok(m_api.nvmlDeviceGetClockInfo, m_device, k_nvml_clock_mem, &mem);
    ok(m_api.nvmlDeviceGetTemperature, m_device, k_nvml_temperature_gpu, &temp);
    ok(m_api.nvmlDeviceGetPowerUsage, m_device, &power);
    ok(m_api.nvmlDeviceGetCurrentClocksEventReasons, m_device, &reasons);
    if (!any) {
      return;
    }
    m_t.push_back(since_start());
    m_sm.push_back(sm);
    m_mem.push_back(mem);
    m_temp.push_back(temp);
    m_power.push_back(static_cast<double>(power) / 1000.0);
    m_reasons.push_back(reasons);
  }

  DynamicLibrary m_lib;
  NvmlApi m_api;
  bool m_initialised = false;
  nvmlDevice_t m_device = nullptr;
  nvmlEventSet_t m_events = nullptr;
  bool m_xid_ready = false;
  std::string m_why;
  std::string m_xid_why;
  unsigned m_max_sm = 0;
  std::thread m_thread;
  std::atomic<bool> m_stop{false};
  Clock::time_point m_start;
  // Written by the watch thread only, read after stop().
  std::vector<int64_t> m_t;
  std::vector<unsigned> m_sm;
  std::vector<unsigned> m_mem;
  std::vector<unsigned> m_temp;
  std::vector<double> m_power;
  std::vector<unsigned long long> m_reasons;
  mutable std::mutex m_lock;
  std::vector<protocol::BurnXid> m_xids;
};

/// One type's burn: A, B, C, the first result kept as the reference.
struct TypeResult {
  bool too_slow = false;   ///< one GEMM takes more than a quarter of the share: try a smaller n
  protocol::BurnType line; ///< its part of the payload's "burn"
  double median_tflops = 0;
  uint64_t mismatched_iterations = 0;
  uint64_t checked_words = 0;
  std::optional<int> first_bad_iteration;
  uint64_t first_bad_words = 0;
};

/// The first result kept as the reference (on the stream), and its hash (compared across GPUs
/// of one model).
uint64_t keep_reference(const DeviceSession& session, const Kernels& kernels, const Stream& stream,
                        const DeviceBuffer& c, const DeviceBuffer& reference, uint64_t bytes) {
  const CudaApi& api = session.api();
  GPUCHECK_CU(api, cuMemcpyDtoDAsync, reference.get(), c.get(), static_cast<size_t>(bytes),
              stream.get());
  DeviceBuffer hash(session, 8);
  GPUCHECK_CU(api, cuMemsetD32Async, hash.get(), 0U, size_t{2}, stream.get());
  CUdeviceptr words = reference.get();
  uint64_t count = bytes / 4;
  CUdeviceptr sum = hash.get();
  launch(api, kernels.hash_words, grid_for(session, count, k_block), k_block, stream.get(),
         {&words, &count, &sum});
  uint64_t result_hash = 0;
  GPUCHECK_CU(api, cuMemcpyDtoHAsync, &result_hash, hash.get(), size_t{8}, stream.get());
  stream.synchronize();
  return result_hash;
}

/// Count into `counter` the 16-byte words of `c` that differ from the reference.
void compare_to_reference(const DeviceSession& session, const Kernels& kernels,
                          const Stream& stream, const DeviceBuffer& c,
                          const DeviceBuffer& reference, uint64_t bytes, CUdeviceptr counter) {
  CUdeviceptr x = c.get();
  CUdeviceptr y = reference.get();
  uint64_t n4 = bytes / 16;
  launch(session.api(), kernels.compare_words, grid_for(session, n4, k_block), k_block,
         stream.get(), {&x, &y, &n4, &counter});
}

/// Random input values of the type's kind into `buffer`.
void fill_input(const DeviceSession& session, const Kernels& kernels, const Stream& stream,
                const GemmType& type, const DeviceBuffer& buffer, uint64_t elements,
                uint32_t seed) {
  CUdeviceptr out = buffer.get();
  uint64_t count = elements;
  uint32_t s = seed;
  uint32_t fill = type.fill;
  float scale = 1.0F;
  launch(session.api(), kernels.fill_values, grid_for(session, count, k_block), k_block,
         stream.get(), {&out, &count, &s, &fill, &scale});
}

/// The type's line of the payload from its timed iterations.
void finish_line(const GemmType& type, int n, int iteration, double seconds,
                 const std::vector<double>& tflops, uint64_t result_hash, TypeResult& result) {
  result.median_tflops = tflops.empty() ? 0.0 : median(tflops);
  const double min_tflops = tflops.empty() ? 0.0 : *std::min_element(tflops.begin(), tflops.end());
  result.line = {type.name,
                 n,
                 iteration,
                 result.median_tflops,
                 min_tflops,
                 seconds,
                 result.mismatched_iterations,
                 std::nullopt,
                 fmt::format("{:016x}", result_hash)};
  if (result.first_bad_iteration) {
    result.line.first_mismatch =
        protocol::BurnMismatch{*result.first_bad_iteration, result.first_bad_words};
  }
}

/// One timed iteration into the type's result: its rate (0: not timed) and its comparison.
void account_iteration(double tflops_now, uint64_t bytes, int iteration, unsigned long long bad,
                       std::vector<double>& tflops, TypeResult& result) {
  if (tflops_now > 0) {
    tflops.push_back(tflops_now);
  }
  result.checked_words += bytes / 4;
  if (bad != 0 && result.mismatched_iterations++ == 0) {
    result.first_bad_iteration = iteration;
    result.first_bad_words = bad;
  }
}

/// `count` timing events.
std::vector<std::unique_ptr<Event>> make_events(const DeviceSession& session, int count) {
  std::vector<std::unique_ptr<Event>> events;
  for (int i = 0; i < count; ++i) {
    events.push_back(std::make_unique<Event>(session));
  }
  return events;
}

TypeResult burn_type(const DeviceSession& session, const Kernels& kernels, const Cublas& cublas,
                     void* handle, const Stream& stream, const GemmType& type, int n,
                     std::chrono::duration<double> share, const std::function<bool()>& stop) {
  const CudaApi& api = session.api();
  set_stage(fmt::format("burn {}", type.name));
  const uint64_t elements = static_cast<uint64_t>(n) * static_cast<uint64_t>(n);
  const uint64_t bytes = elements * type.element_bytes;
  DeviceBuffer a(session, bytes);
  DeviceBuffer b(session, bytes);
  DeviceBuffer c(session, bytes);
  DeviceBuffer reference(session, bytes);
  DeviceBuffer counters(session, 8 * k_batch);
  fill_input(session, kernels, stream, type, a, elements, k_input_seed);
  fill_input(session, kernels, stream, type, b, elements, k_input_seed + 1);
  const float alpha32 = 1.0F;
  const float beta32 = 0.0F;
  const double alpha64 = 1.0;
  const double beta64 = 0.0;
  const bool wide = type.compute == k_cublas_compute_64f;
  const void* alpha = wide ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = wide ? static_cast<const void*>(&beta64) : &beta32;
  const auto gemm = [&] {
    cublas.check(cublas.gemm_ex(handle, k_cublas_op_n, k_cublas_op_n, n, n, n, alpha, a.raw(),
                                type.data_type, n, b.raw(), type.data_type, n, beta, c.raw(),
                                type.data_type, n, type.compute, k_cublas_gemm_default),
                 "cublasGemmEx");
  };
  // The first iteration: the reference, and its hash (compared across GPUs of one model). Its
  // time sizes the batches (and says when n is too large for this GPU's share of the burn).
  stream.synchronize();
  const auto first_start = Clock::now();
  gemm();
  stream.synchronize();
  const std::chrono::duration<double> first = Clock::now() - first_start;
  if (first > share / 4 && n > 1024) {
    TypeResult slow;
    slow.too_slow = true;
    return slow;
  }
  const int batch =
      std::clamp(static_cast<int>(k_batch_s / std::max(first.count(), 1e-6)), 1, k_batch);
  const uint64_t result_hash = keep_reference(session, kernels, stream, c, reference, bytes);
  TypeResult result;
  std::vector<double> tflops;
  const double flop = 2.0 * n * static_cast<double>(n) * n;
  const auto begin = Clock::now();
  int iteration = 1;
  const bool plant = fault_planted("burn");
  const std::vector<std::unique_ptr<Event>> starts = make_events(session, k_batch);
  const std::vector<std::unique_ptr<Event>> ends = make_events(session, k_batch);
  while (Clock::now() - begin < share && !stop()) {
    GPUCHECK_CU(api, cuMemsetD32Async, counters.get(), 0U, size_t{2 * k_batch}, stream.get());
    for (int i = 0; i < batch; ++i) {
      starts[i]->record(stream.get());
      gemm();
      ends[i]->record(stream.get());
      if (plant && iteration + i == 5) {
        // One perturbed iteration (GPUCHECK_PLANT_FAULT=burn): the check must name it.
        GPUCHECK_CU(api, cuMemsetD8, c.get() + 64, static_cast<unsigned char>(0x5A), size_t{1});
      }
      compare_to_reference(session, kernels, stream, c, reference, bytes,
                           counters.get() + 8 * static_cast<uint64_t>(i));
    }
    std::vector<unsigned long long> bad(k_batch, 0);
    GPUCHECK_CU(api, cuMemcpyDtoHAsync, bad.data(), counters.get(), size_t{8 * k_batch},
                stream.get());
    stream.synchronize();
    for (int i = 0; i < batch; ++i) {
      const double ms = elapsed_ms(api, *starts[i], *ends[i]);
      account_iteration(ms > 0 ? flop / (ms * 1e-3) / 1e12 : 0.0, bytes, iteration + i, bad[i],
                        tflops, result);
    }
    iteration += batch;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  finish_line(type, n, iteration, seconds, tflops, result_hash, result);
  return result;
}
/// A type's figure and its verification (every iteration against the first, bit for bit).
void record_type(const GemmType& type, int n, const TypeResult& r, Output<Payload>& out) {
  out.metrics.push_back({fmt::format("burn_{}_tflops", type.name), r.median_tflops, "TFLOP/s",
                         fmt::format("median of {} GEMMs {}^3", r.line.iterations, n)});
  Verification v{
      std::string(k_verify_kind),
      fmt::format("{} GEMM {}^3, every iteration against the first, bit for bit", type.name, n)};
  v.checked = r.checked_words;
  v.mismatches = r.mismatched_iterations;
  if (r.first_bad_iteration) {
    v.first_index = static_cast<uint64_t>(*r.first_bad_iteration);
    v.got =
        fmt::format("{} words differ in iteration {}", r.first_bad_words, *r.first_bad_iteration);
    v.want = "the first iteration's result";
  }
  out.verify.push_back(std::move(v));
}

/// The watch's peaks (NVML's temperature and power during the burn), when it sampled any.
void add_watch_metrics(const protocol::BurnWatch& w, Output<Payload>& out) {
  if (w.t_ms.empty()) {
    return;
  }
  double max_temp = 0;
  double max_power = 0;
  for (const int t : w.temp_c) {
    max_temp = std::max(max_temp, static_cast<double>(t));
  }
  for (const double p : w.power_w) {
    max_power = std::max(max_power, p);
  }
  out.metrics.push_back({"burn_max_temp_c", max_temp, "C", "NVML, during the burn"});
  out.metrics.push_back({"burn_max_power_w", max_power, "W", "NVML, during the burn"});
}
} // namespace

void work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out) {
  const std::chrono::milliseconds duration = long_level_duration();
  set_stage("load cuBLAS");
  const Cublas cublas;
  if (!cublas.lib.loaded() || !cublas.usable()) {
    throw std::runtime_error(cublas.lib.loaded()
                                 ? "cuBLAS lacks cublasGemmEx or cublasCreate_v2"
                                 : "cuBLAS (libcublas.so.13 or .12) could not be loaded: " +
                                       cublas.lib.load().error);
  }
  void* handle = nullptr;
  set_stage("cublasCreate");
  cublas.check(cublas.create(&handle), "cublasCreate_v2");
  struct HandleGuard {
    const Cublas& api;
    void* handle;
    ~HandleGuard() { api.destroy(handle); }
  } guard{cublas, handle};
  Stream stream(session);
  cublas.check(cublas.set_stream(handle, stream.get()), "cublasSetStream_v2");
  Watch watch(session.pci_bus_id());
  session.wait_for_gate();
  const std::vector<GemmType> types = types_for(session.cc_major());
  const auto share = std::chrono::duration<double>(duration) / static_cast<double>(types.size());
  bool interrupted = false;
  const std::function<bool()> stop = [&interrupted] {
    interrupted = interrupted || protocol::gate::stop_requested();
    return interrupted;
  };
  const auto start = Clock::now();
  watch.start();
  protocol::BurnReport& report = out.payload;
  report.duration_s = std::chrono::duration<double>(duration).count();
  report.cublas = cublas.version();
  for (const GemmType& type : types) {
    if (stop()) {
      break;
    }
    // 8192^3 as PyTorch's anchor measures; smaller where the four matrices would not fit.
    int n = 8192;
    while (n > 1024 && 4 * static_cast<uint64_t>(n) * n * type.element_bytes + 512 * k_mib >
                           session.free_bytes()) {
      n /= 2;
    }
    TypeResult r =
        burn_type(session, module.kernels(), cublas, handle, stream, type, n, share, stop);
    while (r.too_slow && n > 1024) {
      n /= 2; // one GEMM would take most of this type's share on this GPU
      r = burn_type(session, module.kernels(), cublas, handle, stream, type, n, share, stop);
    }
    record_type(type, n, r, out);
    report.types.push_back(std::move(r.line));
  }
  watch.stop();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  session.done_with_gpu();
  report.watch = watch.watch();
  add_watch_metrics(report.watch, out);
  report.elapsed_s = seconds;
  report.interrupted = interrupted;
  report.xid_watch = watch.xid_watch();
  report.xids = watch.xids();
}

} // namespace gpucheck::gpu_checks::burn
