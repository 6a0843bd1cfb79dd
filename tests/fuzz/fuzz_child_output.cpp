// What the children send back (the probes' and the GPU checks'), read in the parent: a child runs
// NVIDIA code that may be broken, so its result is outside data. The input is one payload as the
// runner parses it (src/process/child_process.cpp); every reader and judge of child payloads
// gets it: the GPU checks' judges (src/checks/active/ through src/protocol/payloads.cpp, and
// each folder of src/gpu_checks/ through its typed payload), the
// burn's comparison across GPUs, the probe payloads' decoding into the snapshot
// (src/probes/collect.cpp), the interpreter query and the framework import
// (src/probes/python_layout.cpp). Any bytes: readers return errors, never throw; judges judge.
#include <nlohmann/json.hpp>

#include "checks/active/judging.hpp"
#include "fuzz_support.hpp"
#include "gpu_checks/burn/rules.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/json_numbers.hpp"
#include "probes/python_envs.hpp"
#include "protocol/payloads.hpp"

namespace {

/// As probes/collect.cpp decodes a probe child's payload: an exception is a ProbeIssue there.
template <typename T> void decode(const nlohmann::json& payload, const char* key) {
  try {
    (void)gpucheck::read_model_numbers_checked<T>(key != nullptr ? payload.at(key) : payload);
  } catch (const std::exception&) {
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpucheck;
  gpu_checks::install(); // as main() does: the folders' checks and their findings (once)
  const std::string_view text = fuzz::as_text(data, size);
  const nlohmann::json payload = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded()) {
    return 0; // the runner's "reported a result that is not valid JSON"
  }
  checks::GpuTarget gpu;
  gpu.name = "NVIDIA H200";
  gpu.pci_bus_id = "0000:3b:00.0";
  gpu.pcie_gen = 5;
  gpu.pcie_width = 16;
  (void)checks::common_findings("GPU compute", gpu, payload);
  (void)checks::payload_metrics(payload, true);
  (void)checks::all_verified(payload);
  for (const gpu_checks::Registration& r : gpu_checks::registered()) {
    // The checks of their own folders (src/gpu_checks/): per GPU, or over every GPU.
    std::vector<Metric> metrics;
    if (r.judge != nullptr) {
      (void)r.judge(gpu, payload);
    } else if (r.span_judge != nullptr) {
      (void)r.span_judge(fuzz::recorded_snapshot(), payload, false, metrics);
    }
  }
  std::vector<gpu_checks::burn::BurnPeer> peers;
  for (int i = 0; i < 2; ++i) {
    if (std::optional<gpu_checks::burn::BurnPeer> peer =
            gpu_checks::burn::burn_peer(i, payload, false)) {
      peers.push_back(std::move(*peer));
    }
  }
  (void)gpu_checks::burn::judge_burn_peers(peers);
  (void)protocol::read_device_listing(payload);
  (void)protocol::read_work_line(payload);
  (void)protocol::read_copies_together(payload);

  decode<NvmlInfo>(payload, "nvml");
  decode<std::vector<GpuInfo>>(payload, "gpus");
  decode<std::vector<GpuPath>>(payload, "gpu_paths");
  decode<CudaDriverInfo>(payload, nullptr);
  decode<LibraryLoad>(payload, "load");
  decode<CudnnDetails>(payload, "cudnn");
  (void)probes::parse_interpreter_answer(payload);
  (void)probes::parse_import_result("torch", &payload, std::nullopt);
  return 0;
}
