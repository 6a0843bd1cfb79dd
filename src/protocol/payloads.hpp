#pragma once
/// What the GPU check children report, as types: the envelope around each child's own results
/// (its failure, its metrics, its verifications), the device and kernel module every child
/// describes, and the own fields of the streams, bandwidth and cuDNN children. The child writes
/// them and the judge reads them through the functions below, so a key renamed on one side fails
/// the round-trip tests instead of passing every test that runs without a GPU. A protocol header:
/// std and nlohmann only.
///
/// Every read_* function never throws: a key that is missing or of the wrong type is an Error
/// naming its path ("device.cc is missing", "convolutions[2].found.ms is not a number").

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::protocol {

struct PayloadMetric {
  std::string name;
  double value = 0.0;
  std::string unit;
  std::string note;
  bool operator==(const PayloadMetric&) const = default;
};

/// A verification: `kind` ("compute", "copy", "cudnn_conv", ...), `what` it covered.
struct PayloadVerification {
  std::string kind;
  std::string what;
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  uint64_t first_index = 0;
  std::string got;  ///< first bad value, printed
  std::string want; ///< its expected value
  bool operator==(const PayloadVerification&) const = default;
};

/// Where the child stopped: the stage, and the driver call and its CUresult when one failed.
struct PayloadFailure {
  std::string stage;
  std::string call; ///< empty when no driver call failed (another exception)
  int code = 0;
  std::string name; ///< "CUDA_ERROR_OUT_OF_MEMORY", or "symbol missing"
  std::string text;
  std::string message;
  bool operator==(const PayloadFailure&) const = default;
};

struct ChildEnvelope {
  std::optional<PayloadFailure> failure;
  std::vector<PayloadMetric> metrics;
  std::vector<PayloadVerification> verify;
  bool operator==(const ChildEnvelope&) const = default;
};

nlohmann::json to_json(const PayloadMetric& metric);
nlohmann::json to_json(const PayloadVerification& verification);
nlohmann::json to_json(const PayloadFailure& failure);
/// Write the envelope's keys into a child's JSON object (leaving its other keys).
void write_envelope(const ChildEnvelope& envelope, nlohmann::json& out);
/// Read the envelope from a child's JSON; an error names the key that is missing or of the wrong
/// type. Never throws.
Expected<ChildEnvelope> read_envelope(const nlohmann::json& payload);

/// The device a child worked on (DeviceSession::describe()), the payload's "device".
struct DeviceDescription {
  int ordinal = 0; ///< CUDA ordinal inside the child
  std::string name;
  int cc_major = 0; ///< written as "cc": "MAJOR.MINOR"
  int cc_minor = 0;
  int sm_count = 0;
  std::string pci_bus_id;
  uint64_t free_bytes = 0;         ///< free device memory when last read
  uint64_t budget_bytes = 0;       ///< what the child may allocate
  int driver = 0;                  ///< cuDriverGetVersion, e.g. 13000
  int connections = 0;             ///< hardware queues of the context
  uint64_t prepare_used_bytes = 0; ///< device memory its preparation took before its gate
  bool operator==(const DeviceDescription&) const = default;
};

/// The load of gpucheck's kernels (KernelModule::report()), the payload's "module".
/// One kernel image handed to the driver, and its answer.
struct KernelLoadAttempt {
  std::string image; ///< "cuda12.9"
  std::string route; ///< "sass" or "ptx-jit"
  int code = 0;      ///< the CUresult of cuModuleLoadDataEx
  std::string name;  ///< its name
  bool operator==(const KernelLoadAttempt&) const = default;
};

struct KernelModuleReport {
  bool loaded = false;
  /// The image chosen (the one loaded, or the last one tried): "cuda13.0", "cuda12.9",
  /// "cuda11.8"; "" when none was (no kernels built, none fits).
  std::string image_name;
  std::string toolkit;            ///< the CUDA release that built that image
  uint64_t image_bytes = 0;       ///< size of its fatbin
  std::vector<std::string> image; ///< its entries ("sm_90", "compute_75")
  std::string route;              ///< how the driver runs it on this GPU ("sass", "ptx-jit", ...)
  /// Why that image: the rule that picked it and the images passed over, or, with code -3, why
  /// no image fits this driver and GPU.
  std::string reason;
  /// The image is not this gpucheck's newest: the newest does not fit this driver or GPU, or the
  /// driver rejected it.
  bool fallback = false;
  /// Every image handed to the driver, in order (a later one after an earlier one's rejection).
  std::vector<KernelLoadAttempt> attempts;
  /// The call that decided the load: "cuModuleLoadDataEx", "cuModuleGetFunction(NAME)",
  /// "build" (code -2) when this gpucheck carries no kernels, or "choose" (code -3) when none of
  /// its images fits this driver and GPU (the checks that need them skip; `reason` says why).
  std::string call;
  int code = 0; ///< its CUresult
  std::string name;
  std::string text;
  /// Set when the image was handed to the driver; error_log and info_log are written with it.
  std::optional<double> load_ms;
  std::string error_log; ///< the JIT's error log, trimmed
  std::string info_log;  ///< the JIT's info log, trimmed
  bool operator==(const KernelModuleReport&) const = default;
};

nlohmann::json to_json(const DeviceDescription& device);
nlohmann::json to_json(const KernelModuleReport& module);
/// The payload's "device": nullopt when it has none (the child stopped before its context).
Expected<std::optional<DeviceDescription>> read_device(const nlohmann::json& payload);
/// The payload's "module": nullopt when it has none (no kernels loaded in this child).
Expected<std::optional<KernelModuleReport>> read_kernel_module(const nlohmann::json& payload);

/// The GPU's PCIe link as sysfs showed it while the copies ran, each value as sysfs writes it
/// ("32.0 GT/s PCIe", "16"); a value sysfs did not have is absent.
struct PcieLinkReading {
  std::optional<std::string> current_link_speed;
  std::optional<std::string> current_link_width;
  std::optional<std::string> max_link_speed;
  std::optional<std::string> max_link_width;
  bool operator==(const PcieLinkReading&) const = default;
};

/// Where the copying thread ran: the GPU's NUMA node and CPUs (sysfs text, empty where absent),
/// and whether the thread was pinned to those CPUs.
struct NumaPlacement {
  std::string numa_node;
  std::string local_cpus;
  bool pinned = false;
  bool operator==(const NumaPlacement&) const = default;
};

/// The sizes the copies used after the memory budget.
struct CopySizes {
  uint64_t host_copy_bytes = 0; ///< each pinned copy (bidirectional: half of it each way)
  uint64_t d2d_bytes = 0;
  uint64_t pageable_bytes = 0;
  bool operator==(const CopySizes&) const = default;
};

/// The bidirectional copies' counts per direction (host->device, device->host): timed copies,
/// extra copies after them, and samples left out because the other direction had stopped.
struct BidirectionalCounts {
  std::vector<int> copies;
  std::vector<int> extra;
  int uncovered = 0;
  bool operator==(const BidirectionalCounts&) const = default;
};

/// The bandwidth child's own fields, each written when the child got that far.
struct BandwidthPayload {
  std::optional<NumaPlacement> numa;
  std::optional<CopySizes> sizes;
  std::optional<PcieLinkReading> link;
  std::optional<BidirectionalCounts> bidirectional;
  std::optional<int> gate_timeouts; ///< samples whose spin-kernel gate timed out
  std::optional<bool> gated;        ///< false: the copies were queued without the gate kernel
  bool operator==(const BandwidthPayload&) const = default;
};

/// One direction of the copies on every GPU at once: its rate, and its copy window on the host's
/// steady clock (nanoseconds), so that the judge sees how the GPUs' windows overlapped.
struct TogetherDirection {
  double gbps = 0.0;
  int64_t opened_ns = 0;
  int64_t over_ns = 0;
  int copies = 0;
  bool operator==(const TogetherDirection&) const = default;
};

/// The copies-together work's own fields ("together", "gate_timeouts").
struct CopiesTogetherPayload {
  TogetherDirection h2d;
  TogetherDirection d2h;
  uint64_t bytes = 0;
  int gate_timeouts = 0;
  bool operator==(const CopiesTogetherPayload&) const = default;
};

nlohmann::json to_json(const PcieLinkReading& link);
nlohmann::json to_json(const NumaPlacement& numa);
nlohmann::json to_json(const CopySizes& sizes);
nlohmann::json to_json(const BidirectionalCounts& counts);
/// Write the bandwidth child's own keys that are set into its JSON object (leaving its other
/// keys): "numa", "sizes", "link", "bidirectional", "gate_timeouts", "gated".
void write_bandwidth(const BandwidthPayload& bandwidth, nlohmann::json& out);
Expected<BandwidthPayload> read_bandwidth(const nlohmann::json& payload);
/// gpu.bandwidth's result is its host copies' payload with its device-local copy's (a work of its
/// own) folded in: the local copy's metrics (a metric both have keeps the larger value: the peak
/// RSS), verifications, its failure when the host copies had none, its buffer size, gate
/// timeouts and gating. An error (the local copy's payload unreadable) leaves `bandwidth` as it
/// was.
std::optional<Error> fold_local_copies(nlohmann::json& bandwidth, const nlohmann::json& local);
void write_copies_together(const CopiesTogetherPayload& together, nlohmann::json& out);
/// nullopt when the payload has no "together" (the work stopped before its copies).
Expected<std::optional<CopiesTogetherPayload>> read_copies_together(const nlohmann::json& payload);

/// The head of one line of the shared child (gpu-device): which work it is, and why that work
/// did not run (an earlier work left the context unusable). The rest of the line is the work's
/// own payload (envelope, device, module, its own fields).
struct WorkLine {
  std::string work; ///< engine::work_name(): "compute", "streams", "bandwidth", ...
  std::optional<std::string> not_run;
  /// A line that carries no result: the work, prepared on a thread of its own beside the others
  /// (cuDNN's lane), says where its preparation is: k_lane_preparing, then k_lane_prepared.
  std::optional<std::string> lane;
  bool operator==(const WorkLine&) const = default;
};

inline constexpr std::string_view k_lane_preparing = "preparing";
inline constexpr std::string_view k_lane_prepared = "prepared";

/// Write "work" (and "not_run" when set) into a line's JSON object (leaving its other keys).
void write_work_line(const WorkLine& line, nlohmann::json& out);
/// An error when the line is not an object or its "work" or "not_run" is missing or mistyped.
Expected<WorkLine> read_work_line(const nlohmann::json& line);
/// The start of a work's line in a shared child's result: {"work": NAME, "metrics": [],
/// "verify": []}, which the work fills.
nlohmann::json work_part(std::string_view work);

/// A shared child's works as its argument spells them ("compute,streams,bandwidth"): the engine
/// writes the list, the child reads it back in the same order.
std::string work_list_arg(const std::vector<std::string>& works);
std::vector<std::string> read_work_list(std::string_view arg);

/// One CUDA device as the gpu-devices child lists it.
struct ListedDevice {
  int ordinal = 0;
  std::string name;
  bool operator==(const ListedDevice&) const = default;
};

/// The gpu-devices child's result: why there is no driver (`error`), or cuInit's result and the
/// devices it found.
struct DeviceListing {
  std::optional<std::string> error; ///< libcuda did not load or lacks the driver API
  std::optional<int> init;          ///< cuInit's CUresult
  std::optional<std::string> init_name;
  std::vector<ListedDevice> devices;
  bool operator==(const DeviceListing&) const = default;
};

nlohmann::json to_json(const DeviceListing& listing);
Expected<DeviceListing> read_device_listing(const nlohmann::json& payload);

/// One GPU of the multi-GPU child (gpu-peers), as it saw it.
struct PeerDevice {
  int ordinal = 0; ///< CUDA ordinal inside the child
  std::string name;
  std::string pci_bus_id;
  bool operator==(const PeerDevice&) const = default;
};

/// What the driver says of one ordered pair (indices into the devices).
struct PeerAccess {
  int from = 0;
  int to = 0;
  bool can_access = false;     ///< cuDeviceCanAccessPeer
  int performance_rank = 0;    ///< CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK
  bool native_atomics = false; ///< CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED
  bool operator==(const PeerAccess&) const = default;
};

/// One ordered pair measured: `from`'s buffer copied into `to`'s by the copy engines, issued on
/// `from`'s stream (nvbandwidth's "write"); GB/s with 1e9 bytes.
struct PeerPair {
  int from = 0;
  int to = 0;
  uint64_t bytes = 0;      ///< one copy
  int copies = 0;          ///< copies per timed sample
  double write_gbps = 0.0; ///< this direction alone, median of the samples
  double bidir_gbps = 0.0; ///< this direction while the reverse runs at once
  double latency_us = 0.0; ///< one 4-byte copy, mean of a queued run
  /// How many pairs were timed at once, this one included (disjoint pairs, each GPU in one):
  /// 1 alone; absent from a child that timed every pair alone.
  std::optional<int> at_once;
  bool operator==(const PeerPair&) const = default;
};

/// One size of the long level's sweep (`--level long`): `from`'s buffer copied into `to`'s
/// alone, as PeerPair's write figure, at `bytes` per copy.
struct PeerSweepPoint {
  int from = 0;
  int to = 0;
  uint64_t bytes = 0;
  int copies = 0;
  double write_gbps = 0.0;
  bool operator==(const PeerSweepPoint&) const = default;
};

/// The peer-to-peer work's own fields; its verifications (kind "p2p", what "0->1") and failure
/// are in the envelope.
struct PeersPayload {
  std::vector<PeerDevice> devices;
  std::vector<PeerAccess> access;
  std::vector<PeerPair> pairs;
  /// Every size per ordered pair at `--level long` (1 MiB to 256 MiB, as the allowance holds);
  /// empty in a standard run, which measures one size (`pairs`).
  std::vector<PeerSweepPoint> sweep;
  bool gated = false; ///< the copies were held behind a stream wait and released at once
  bool operator==(const PeersPayload&) const = default;
};

/// Write "devices", "access", "pairs", "sweep" and "gated" (leaving the other keys).
void write_peers(const PeersPayload& peers, nlohmann::json& out);
Expected<PeersPayload> read_peers(const nlohmann::json& payload);

/// One all-reduce size of the NCCL work: host-timed per operation (median of samples), and
/// nccl-tests' bandwidths (GB/s with 1e9 bytes; busbw = algbw x 2(n-1)/n).
struct NcclSize {
  uint64_t bytes = 0;
  int iterations = 0; ///< per timed sample
  double ms = 0.0;    ///< one all-reduce
  double algbw_gbps = 0.0;
  double busbw_gbps = 0.0;
  bool operator==(const NcclSize&) const = default;
};

/// The NCCL work's own fields (in the gpu-peers child, after the peer copies); its
/// verifications (kind "nccl") and failure are in the envelope.
struct NcclPayload {
  std::string missing; ///< why libnccl.so.2 could not be used; empty when it was
  std::string library; ///< the file the loader picked
  int version = 0;     ///< ncclGetVersion: 22803 for 2.28.3
  int ranks = 0;       ///< GPUs in the communicator (ncclCommInitAll)
  std::vector<NcclSize> sizes;
  bool operator==(const NcclPayload&) const = default;
};

/// Write "nccl_missing", "nccl_library", "nccl_version", "ranks" and "sizes".
void write_nccl(const NcclPayload& nccl, nlohmann::json& out);
Expected<NcclPayload> read_nccl(const nlohmann::json& payload);

/// The cuDNN library the child loaded.
struct CudnnLibrary {
  std::string path;    ///< its real path
  int64_t version = 0; ///< cudnnGetVersion (9.x: major*10000 + minor*100 + patch)
  int64_t cudart = 0;  ///< cudnnGetCudartVersion
  bool graph_api = false;
  /// The backend entries that did not resolve; written only when graph_api is false.
  std::vector<std::string> graph_api_missing;
  bool operator==(const CudnnLibrary&) const = default;
};

/// One legacy-API algorithm: `ms` and `tflops` only where it was timed (the perf cases).
struct ConvAlgoTiming {
  std::string algo; ///< "IMPLICIT_PRECOMP_GEMM", ...
  std::optional<double> ms;
  std::optional<double> tflops;
  bool operator==(const ConvAlgoTiming&) const = default;
};

/// A graph-API engine config that ran in the screening.
struct ConvGraphScreened {
  std::string config; ///< "engine 12, knobs 3=1"
  std::string mode;   ///< "A" or "fallback"
  int rank = 0;
  double screen_ms = 0.0;
  bool operator==(const ConvGraphScreened&) const = default;
};

/// How the graph API's configs fared.
struct ConvGraphScreening {
  uint64_t offered = 0;
  uint64_t tried = 0;
  int refused = 0;
  int workspace_too_large = 0;
  int failed = 0;
  std::map<std::string, int> skipped_statuses; ///< cuDNN status name -> configs skipped for it
  std::vector<ConvGraphScreened> screened;     ///< fastest first
  bool operator==(const ConvGraphScreening&) const = default;
};

/// The graph API's fastest config, timed and verified.
struct ConvGraphBest {
  int64_t engine = -1;
  std::string knobs; ///< the config, described
  std::vector<std::string> numerical_notes;
  std::string mode; ///< "A" or "fallback"
  int rank = 0;
  double ms = 0.0;
  double tflops = 0.0;
  bool operator==(const ConvGraphBest&) const = default;
};

struct ConvGraphError {
  std::string call;
  int status = 0;
  std::string name;
  bool operator==(const ConvGraphError&) const = default;
};

/// The graph API on one convolution: not available, or its screening (and its best when a
/// config ran), or the call that failed. Flat in JSON: {"available", "offered", ..., "ms", ...,
/// "error"}.
struct ConvGraph {
  bool available = false;
  std::optional<ConvGraphScreening> screening;
  std::optional<ConvGraphBest> best;
  std::optional<ConvGraphError> error;
  bool operator==(const ConvGraph&) const = default;
};

/// The better of the legacy API's timed best and the graph API's best.
struct ConvBest {
  std::string api; ///< "legacy" or "graph"
  std::string what;
  double ms = 0.0;
  double tflops = 0.0;
  bool operator==(const ConvBest&) const = default;
};

/// One convolution: the small verified cases carry the heuristic's algorithm only; the perf cases
/// also the timed best (`found`), the graph API and the best of both.
struct ConvRecord {
  std::string label;
  std::string shape;
  double gflop = 0.0;
  ConvAlgoTiming heuristic;
  std::optional<ConvAlgoTiming> found;
  std::optional<ConvGraph> graph;
  std::optional<ConvBest> best;
  bool operator==(const ConvRecord&) const = default;
};

/// A deterministic algorithm run twice on the same input.
struct CudnnDeterminism {
  std::string label;
  std::string algo;
  std::vector<std::string> hashes; ///< two hex hashes of the outputs
  bool equal = false;
  bool operator==(const CudnnDeterminism&) const = default;
};

/// The cuDNN call that failed.
struct CudnnFailure {
  std::string call;
  int status = 0;
  std::string name;
  std::string detail; ///< cudnnGetLastErrorString, may be empty
  std::string stage;
  bool operator==(const CudnnFailure&) const = default;
};

/// The cuDNN child's own fields. Each is written only when the child got that far: `missing`
/// when no usable libcudnn loaded, `library` and `convolutions` once one did.
struct CudnnPayload {
  std::optional<std::string> missing;   ///< "cudnn_missing": why cuDNN could not be used
  std::optional<CudnnLibrary> library;  ///< "cudnn"
  std::vector<ConvRecord> convolutions; ///< written with `library`
  std::optional<std::string> inputs_on; ///< "gpu" or "host": where inputs were generated
  std::optional<CudnnDeterminism> determinism;
  std::optional<CudnnFailure> failure; ///< "cudnn_failure"
  bool operator==(const CudnnPayload&) const = default;
};

nlohmann::json to_json(const ConvRecord& record);
/// Write the cuDNN child's own keys into its JSON object (leaving its other keys).
void write_cudnn(const CudnnPayload& cudnn, nlohmann::json& out);
Expected<CudnnPayload> read_cudnn(const nlohmann::json& payload);

/// One word of the memory test that read back wrong (the child records the first 32): its
/// device address and values as the child prints them ("0x7f2a40001230", "0xffffffff").
struct MemtestError {
  std::string address;
  std::string pattern; ///< the pattern whose check found it
  std::string expected;
  std::string observed;
  bool operator==(const MemtestError&) const = default;
};

/// One memory-test pattern and how many passes (writes and checks) it made.
struct MemtestPattern {
  std::string name; ///< walking_ones, walking_zeros, moving_inversions, random, address, modulo20
  int passes = 0;
  bool operator==(const MemtestPattern&) const = default;
};

/// The memory test's own fields, the payload's "memtest" (docs/checks.md, gpu.memtest).
struct MemtestReport {
  uint64_t free_bytes = 0;   ///< free device memory at the gate, after the context
  uint64_t tested_bytes = 0; ///< allocated and tested
  int chunks = 0;            ///< allocations
  double duration_s = 0.0;   ///< asked (--duration)
  double elapsed_s = 0.0;    ///< spent in the patterns (allocation excluded)
  uint64_t bytes_moved = 0;  ///< written plus read by the patterns
  int rounds = 0;            ///< full rounds of every pattern
  std::vector<MemtestPattern> patterns;
  bool interrupted = false;         ///< stopped by the user (SIGINT) before duration_s
  uint64_t error_count = 0;         ///< words that read back wrong, over the whole test
  std::vector<MemtestError> errors; ///< the first of them
  bool operator==(const MemtestReport&) const = default;
};

/// The first iteration of a burn type whose result differed from the first iteration's.
struct BurnMismatch {
  int iteration = 0;
  uint64_t words = 0; ///< words that differed in it
  bool operator==(const BurnMismatch&) const = default;
};

/// One GEMM type of the burn.
struct BurnType {
  std::string type; ///< bf16, fp16, fp32 (no TF32), fp64
  int n = 0;        ///< square GEMM size m = n = k
  int iterations = 0;
  double tflops_median = 0.0; ///< per iteration, device events
  double tflops_min = 0.0;
  double elapsed_s = 0.0;
  uint64_t mismatched_iterations = 0;         ///< iterations whose result differs from the first's
  std::optional<BurnMismatch> first_mismatch; ///< JSON null when none
  std::string result_hash;                    ///< hex hash of the first iteration's result
  bool operator==(const BurnType&) const = default;
};

/// NVML sampled during the burn (about every period_ms); the sample lists have one entry per
/// sample, in order.
struct BurnWatch {
  bool available = false;
  std::string why; ///< why not, when unavailable
  int period_ms = 0;
  std::vector<int64_t> t_ms; ///< since the burn's start
  std::vector<int> sm_mhz;
  std::vector<int> mem_mhz;
  std::vector<int> temp_c;
  std::vector<double> power_w;
  std::vector<uint64_t> reasons; ///< nvmlClocksEventReasons bitmask per sample
  int max_sm_mhz = 0;            ///< NVML's max SM clock, 0 when unknown
  bool operator==(const BurnWatch&) const = default;
};

/// An Xid event NVML delivered during the burn.
struct BurnXid {
  int64_t t_ms = 0;
  int xid = 0;
  bool operator==(const BurnXid&) const = default;
};

/// The burn's own fields, the payload's "burn" (docs/checks.md, gpu.burn).
struct BurnReport {
  double duration_s = 0.0;
  double elapsed_s = 0.0;
  bool interrupted = false;
  std::string cublas; ///< cuBLAS version "13.0.2", "" when unknown
  std::vector<BurnType> types;
  BurnWatch watch;
  std::string xid_watch; ///< "nvml" or "unavailable: <why>"
  std::vector<BurnXid> xids;
  bool operator==(const BurnReport&) const = default;
};

/// Write "memtest" / "burn" into a child's JSON object (leaving its other keys), as the children
/// (src/gpu_checks/memtest/, src/gpu_checks/burn/) write them.
void write_memtest(const MemtestReport& memtest, nlohmann::json& out);
void write_burn(const BurnReport& burn, nlohmann::json& out);
/// The payload's "memtest" / "burn"; an error when it is missing (the child stopped before its
/// work: its failure says why) or a key inside is missing or mistyped. Never throws.
Expected<MemtestReport> read_memtest(const nlohmann::json& payload);
Expected<BurnReport> read_burn(const nlohmann::json& payload);

} // namespace gpucheck::protocol
