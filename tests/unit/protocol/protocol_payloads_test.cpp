// What the GPU check children write and the judges read (protocol/payloads.hpp): the envelope, the
// device, the kernel module, the cuDNN children's own fields. The same code on both
// sides, so a renamed key fails here rather than passing every GPU-less test; the literal JSON
// below pins the keys that the report and bench/compare.py read.

#include "gpu_checks/compute/compute.hpp"
#include "gpu_checks/streams/streams.hpp"
#include "protocol/payloads.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>

namespace gpucheck::protocol {
namespace {

ChildEnvelope everything_set() {
  ChildEnvelope envelope;
  envelope.failure = PayloadFailure{"device-local copies",        "cuMemcpyDtoDAsync", 700,
                                    "CUDA_ERROR_ILLEGAL_ADDRESS", "illegal address",   "it failed"};
  envelope.metrics = {{"h2d_gbps", 55.3, "GB/s", "pinned"}, {"d2d_gbps", 2099.7, "GB/s", ""}};
  envelope.verify = {{"copy", "pinned host->device", 1 << 24, 3, 17, "0x1", "0x2"},
                     {"compute", "fma", 1 << 20, 0, 0, "", ""}};
  return envelope;
}

TEST(ProtocolPayloads, RoundTripKeepsEveryField) {
  const ChildEnvelope envelope = everything_set();
  nlohmann::json out = {{"device", {{"cc", "9.0"}}}}; // the child's own keys stay
  write_envelope(envelope, out);
  EXPECT_EQ(out["device"]["cc"], "9.0");
  const Expected<ChildEnvelope> back = read_envelope(nlohmann::json::parse(out.dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value(), envelope);
  // Without a failure, and with a failure that named no call.
  ChildEnvelope quiet = everything_set();
  quiet.failure.reset();
  write_envelope(quiet, out);
  EXPECT_FALSE(out.contains("failure"));
  EXPECT_EQ(read_envelope(out).value(), quiet);
  quiet.failure = PayloadFailure{"arguments", "", 0, "", "", "bad device ordinal"};
  write_envelope(quiet, out);
  EXPECT_EQ(read_envelope(out).value(), quiet);
}

TEST(ProtocolPayloads, EveryRenamedOrRetypedKeyIsAnErrorNamingIt) {
  nlohmann::json good = nlohmann::json::object();
  write_envelope(everything_set(), good);
  // Each key of each part, removed and retyped, in turn.
  const std::vector<std::pair<std::string, std::string>> keys{
      {"metrics", "name"},    {"metrics", "value"},     {"metrics", "unit"},
      {"metrics", "note"},    {"verify", "kind"},       {"verify", "what"},
      {"verify", "checked"},  {"verify", "mismatches"}, {"verify", "first_index"},
      {"verify", "got"},      {"verify", "want"},       {"failure", "stage"},
      {"failure", "message"}, {"failure", "code"},      {"failure", "name"},
      {"failure", "text"}};
  for (const auto& [part, key] : keys) {
    for (const bool retype : {false, true}) {
      nlohmann::json bad = good;
      nlohmann::json& holder = part == "failure" ? bad[part] : bad[part][0];
      if (retype) {
        holder[key] = nlohmann::json::array();
      } else {
        holder.erase(key);
      }
      const Expected<ChildEnvelope> read = read_envelope(bad);
      ASSERT_FALSE(read) << part << "." << key << (retype ? " retyped" : " removed");
      EXPECT_NE(read.error().message.find(key), std::string::npos) << read.error().message;
    }
  }
}

TEST(ProtocolPayloads, GarbageIsAnErrorNotAnException) {
  for (const nlohmann::json& bad :
       {nlohmann::json(nullptr), nlohmann::json(42), nlohmann::json::array(),
        nlohmann::json{{"metrics", "x"}, {"verify", nlohmann::json::array()}},
        nlohmann::json{{"metrics", {1}}, {"verify", nlohmann::json::array()}},
        nlohmann::json{{"metrics", nlohmann::json::array()}, {"verify", {"x"}}},
        nlohmann::json{{"metrics", nlohmann::json::array()},
                       {"verify", nlohmann::json::array()},
                       {"failure", 3}},
        nlohmann::json{{"metrics", {{{"name", "x"}, {"value", -1.5}, {"unit", "u"}}}},
                       {"verify", nlohmann::json::array()}}}) {
    EXPECT_FALSE(read_envelope(bad)) << bad.dump();
  }
  // A negative count is not a count.
  nlohmann::json out = nlohmann::json::object();
  write_envelope(everything_set(), out);
  out["verify"][0]["mismatches"] = -1;
  EXPECT_FALSE(read_envelope(out));
}

// ---- The typed child fields ----

DeviceDescription h200() {
  return {0,          "NVIDIA H200", 9, 0,           132, "00000000:1B:00.0", 150ULL << 30,
          1ULL << 30, 13000,         2, 352ULL << 20};
}

KernelModuleReport loaded_module() {
  KernelModuleReport m;
  m.loaded = true;
  m.image_name = "cuda12.9";
  m.toolkit = "12.9";
  m.image_bytes = 123456;
  m.image = {"sm_90", "compute_75"};
  m.route = "sass";
  m.reason = "cuda12.9 has SASS sm_90";
  m.fallback = true;
  m.attempts = {{"cuda13.0", "sass", 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
                {"cuda12.9", "sass", 0, "CUDA_SUCCESS"}};
  m.call = "cuModuleLoadDataEx";
  m.code = 0;
  m.name = "CUDA_SUCCESS";
  m.text = "no error";
  m.load_ms = 3.25;
  m.error_log = "";
  m.info_log = "ptxas info";
  return m;
}

KernelModuleReport kernels_not_built() {
  KernelModuleReport m;
  m.toolkit = "13.0";
  m.route = "none";
  m.call = "build";
  m.code = -2;
  m.name = "no kernels built";
  m.text = "built without nvcc";
  return m;
}

ConvRecord small_conv() {
  ConvRecord r;
  r.label = "fp32_nchw_small";
  r.shape = "2x16x20x20, 24 filters 3x3, pad 1, stride 1, fp32 NCHW";
  r.gflop = 0.0066;
  r.heuristic.algo = "IMPLICIT_PRECOMP_GEMM";
  return r;
}

ConvRecord perf_conv() {
  ConvRecord r;
  r.label = "fp16_nhwc_32x256x56x56";
  r.shape = "32x256x56x56, 256 filters 3x3, pad 1, stride 1, fp16 NHWC";
  r.gflop = 118.4;
  r.heuristic = {"IMPLICIT_PRECOMP_GEMM", 0.9, 131.5};
  r.found = ConvAlgoTiming{"WINOGRAD_NONFUSED", 0.5, 236.8};
  ConvGraph& g = r.graph.emplace();
  g.available = true;
  ConvGraphScreening& s = g.screening.emplace();
  s.offered = 12;
  s.tried = 4;
  s.refused = 1;
  s.workspace_too_large = 1;
  s.failed = 1;
  s.skipped_statuses = {{"CUDNN_STATUS_NOT_SUPPORTED", 2}};
  s.screened = {{"engine 12, knobs 3=1", "A", 0, 0.41}, {"engine 7", "fallback", 2, 0.6}};
  g.best = ConvGraphBest{12, "engine 12, knobs 3=1", {"TENSOR_CORE"}, "A", 0, 0.4, 296.0};
  r.best = ConvBest{"graph", "graph API engine 12, knobs 3=1", 0.4, 296.0};
  return r;
}

CudnnPayload everything_cudnn() {
  CudnnPayload c;
  c.library =
      CudnnLibrary{"/usr/lib/libcudnn.so.9.10.2", 91002, 13000, false, {"cudnnBackendExecute"}};
  ConvRecord unavailable = perf_conv();
  unavailable.label = "no_graph";
  unavailable.graph = ConvGraph{false, std::nullopt, std::nullopt, std::nullopt};
  ConvRecord refused = perf_conv();
  refused.label = "graph_error";
  refused.graph =
      ConvGraph{true, std::nullopt, std::nullopt,
                ConvGraphError{"cudnnBackendFinalize", 3000, "CUDNN_STATUS_NOT_SUPPORTED"}};
  c.convolutions = {small_conv(), perf_conv(), unavailable, refused};
  c.inputs_on = "gpu";
  c.determinism = CudnnDeterminism{
      "fp32_nchw_64x64x56x56", "IMPLICIT_GEMM", {"00000000000000ab", "00000000000000cd"}, false};
  c.failure = CudnnFailure{"cudnnConvolutionForward", 8, "CUDNN_STATUS_EXECUTION_FAILED", "",
                           "cudnn timing x"};
  return c;
}

nlohmann::json with_device(const DeviceDescription& d) {
  return {{"device", to_json(d)}};
}

nlohmann::json with_module(const KernelModuleReport& m) {
  return {{"module", to_json(m)}};
}

nlohmann::json written_cudnn(const CudnnPayload& p) {
  nlohmann::json out = nlohmann::json::object();
  write_cudnn(p, out);
  return out;
}

/// Every object member of `value`, as JSON pointers (lists are walked into, not retyped).
void members(const nlohmann::json& value, const nlohmann::json::json_pointer& at,
             std::vector<nlohmann::json::json_pointer>& out) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      out.push_back(at / key);
      members(item, at / key, out);
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      members(value[i], at / i, out);
    }
  }
}

/// Each key the writer wrote matters to the reader: removed, the read fails naming it or reads
/// something else (an optional part); retyped, the read fails naming it.
template <typename T, typename Read>
void expect_every_key_read(const T& value, const nlohmann::json& written, Read read) {
  const auto back = read(nlohmann::json::parse(written.dump()));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back.value(), value);
  std::vector<nlohmann::json::json_pointer> keys;
  members(written, nlohmann::json::json_pointer(), keys);
  ASSERT_FALSE(keys.empty());
  for (const nlohmann::json::json_pointer& key : keys) {
    SCOPED_TRACE(key.to_string());
    nlohmann::json removed = written;
    removed[key.parent_pointer()].erase(key.back());
    const auto without = read(removed);
    if (without) {
      EXPECT_NE(without.value(), value) << "removing it changed nothing";
    } else {
      EXPECT_NE(without.error().message.find(key.back()), std::string::npos)
          << without.error().message;
    }
    nlohmann::json retyped = written;
    retyped[key] = retyped[key].is_boolean() ? nlohmann::json("yes") : nlohmann::json(true);
    const auto wrong = read(retyped);
    ASSERT_FALSE(wrong) << "retyped, it still reads";
    EXPECT_NE(wrong.error().message.find(key.back()), std::string::npos) << wrong.error().message;
  }
}

TEST(ProtocolPayloads, DeviceRoundTripsAndEveryKeyIsRead) {
  expect_every_key_read(std::optional<DeviceDescription>(h200()), with_device(h200()),
                        &read_device);
  const auto none = read_device(nlohmann::json::object());
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value());
  nlohmann::json bad_cc = with_device(h200());
  bad_cc["device"]["cc"] = "9";
  ASSERT_FALSE(read_device(bad_cc));
  EXPECT_NE(read_device(bad_cc).error().message.find("device.cc"), std::string::npos);
}

TEST(ProtocolPayloads, DeviceJsonKeepsItsKeys) {
  EXPECT_EQ(to_json(h200()), nlohmann::json::parse(R"({"ordinal": 0, "name": "NVIDIA H200",
      "cc": "9.0", "sm_count": 132, "pci_bus_id": "00000000:1B:00.0",
      "free_bytes": 161061273600, "budget_bytes": 1073741824, "driver": 13000,
      "connections": 2, "prepare_used_bytes": 369098752})"));
}

TEST(ProtocolPayloads, KernelModuleRoundTripsAndEveryKeyIsRead) {
  for (const KernelModuleReport& m : {loaded_module(), kernels_not_built()}) {
    expect_every_key_read(std::optional<KernelModuleReport>(m), with_module(m),
                          &read_kernel_module);
  }
  const auto none = read_kernel_module(nlohmann::json::object());
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value());
}

TEST(ProtocolPayloads, KernelModuleJsonKeepsItsKeys) {
  EXPECT_EQ(to_json(loaded_module()), nlohmann::json::parse(R"({"loaded": true,
      "image_name": "cuda12.9", "toolkit": "12.9",
      "image_bytes": 123456, "image": ["sm_90", "compute_75"], "route": "sass",
      "reason": "cuda12.9 has SASS sm_90", "fallback": true, "attempts": [
        {"image": "cuda13.0", "route": "sass", "code": 222,
         "name": "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
        {"image": "cuda12.9", "route": "sass", "code": 0, "name": "CUDA_SUCCESS"}],
      "call": "cuModuleLoadDataEx", "code": 0, "name": "CUDA_SUCCESS", "text": "no error",
      "load_ms": 3.25, "error_log": "", "info_log": "ptxas info"})"));
  // Without a load, no load time and no logs.
  EXPECT_EQ(to_json(kernels_not_built()), nlohmann::json::parse(R"({"loaded": false,
      "image_name": "", "toolkit": "13.0", "image_bytes": 0, "image": [], "route": "none",
      "reason": "", "fallback": false, "attempts": [], "call": "build",
      "code": -2, "name": "no kernels built", "text": "built without nvcc"})"));
}

BandwidthPayload everything_bandwidth() {
  BandwidthPayload b;
  b.numa = NumaPlacement{"1", "48-95,144-191", true};
  b.sizes = CopySizes{64ULL << 20, 256ULL << 20, 32ULL << 20};
  b.link = PcieLinkReading{"32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16"};
  b.bidirectional = BidirectionalCounts{{9, 9}, {6, 7}, 1};
  b.gate_timeouts = 0;
  b.gated = true;
  return b;
}

nlohmann::json written_bandwidth(const BandwidthPayload& p) {
  nlohmann::json out = nlohmann::json::object();
  write_bandwidth(p, out);
  return out;
}

TEST(ProtocolPayloads, BandwidthRoundTripsAndEveryKeyIsRead) {
  expect_every_key_read(everything_bandwidth(), written_bandwidth(everything_bandwidth()),
                        &read_bandwidth);
  // sysfs without the link's files: the link is there, its values absent.
  BandwidthPayload no_link_files;
  no_link_files.link = PcieLinkReading{};
  expect_every_key_read(no_link_files, written_bandwidth(no_link_files), &read_bandwidth);
  // Nothing written (the child stopped before its copies): nothing read.
  EXPECT_EQ(read_bandwidth(nlohmann::json::object()).value(), BandwidthPayload{});
  EXPECT_FALSE(read_bandwidth(nlohmann::json::array()));
}

TEST(ProtocolPayloads, BandwidthJsonKeepsTheKeysComparePyReads) {
  // bench/compare.py sizes PyTorch's copies from "sizes".
  EXPECT_EQ(written_bandwidth(everything_bandwidth()), nlohmann::json::parse(R"({
      "numa": {"numa_node": "1", "local_cpus": "48-95,144-191", "pinned": true},
      "sizes": {"host_copy_bytes": 67108864, "d2d_bytes": 268435456, "pageable_bytes": 33554432},
      "link": {"current_link_speed": "32.0 GT/s PCIe", "current_link_width": "16",
               "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"},
      "bidirectional": {"copies": [9, 9], "extra": [6, 7], "uncovered": 1},
      "gate_timeouts": 0, "gated": true})"));
  // Written in parts as the child gets there: each part leaves the others.
  nlohmann::json out = written_bandwidth({.numa = NumaPlacement{"0", "0-7", false}});
  write_bandwidth({.gate_timeouts = 2}, out);
  const BandwidthPayload back = read_bandwidth(out).value();
  EXPECT_EQ(back.numa, (NumaPlacement{"0", "0-7", false}));
  EXPECT_EQ(back.gate_timeouts, 2);
}

TEST(ProtocolPayloads, TheDeviceLocalCopyFoldsIntoTheHostCopies) {
  ChildEnvelope host_envelope;
  host_envelope.metrics = {{"h2d_gbps", 55.3, "GB/s", "pinned"},
                           {"host_peak_rss_mib", 90.0, "MiB", "peak"}};
  host_envelope.verify = {{"copy", "pinned host->device", 1 << 24, 0, 0, "", ""}};
  nlohmann::json host = nlohmann::json::object();
  write_envelope(host_envelope, host);
  host["device"] = {{"ordinal", 0}};
  write_bandwidth(
      {.sizes = CopySizes{64ULL << 20, 0, 32ULL << 20}, .gate_timeouts = 1, .gated = true}, host);
  ChildEnvelope local_envelope = everything_set(); // a failure, d2d_gbps and two verifications
  local_envelope.metrics.push_back({"host_peak_rss_mib", 120.0, "MiB", "peak"});
  nlohmann::json local = nlohmann::json::object();
  write_envelope(local_envelope, local);
  write_bandwidth({.sizes = CopySizes{0, 256ULL << 20, 0}, .gate_timeouts = 2, .gated = false},
                  local);

  nlohmann::json folded = host;
  ASSERT_FALSE(fold_local_copies(folded, local).has_value());
  const ChildEnvelope envelope = read_envelope(folded).value();
  ASSERT_EQ(envelope.metrics.size(), 3U); // h2d, the larger peak RSS, d2d
  EXPECT_EQ(envelope.metrics[1].value, 120.0);
  EXPECT_EQ(envelope.metrics[2].name, "d2d_gbps");
  EXPECT_EQ(envelope.verify.size(), 3U);
  EXPECT_EQ(envelope.failure, local_envelope.failure); // the host copies had none
  const BandwidthPayload fields = read_bandwidth(folded).value();
  EXPECT_EQ(fields.sizes, (CopySizes{64ULL << 20, 256ULL << 20, 32ULL << 20}));
  EXPECT_EQ(fields.gate_timeouts, 3);
  EXPECT_EQ(fields.gated, false);
  EXPECT_EQ(folded["device"], host["device"]); // the host copies' other keys stay

  // The host copies' own failure is the one kept.
  nlohmann::json failed = host;
  ChildEnvelope failed_envelope = host_envelope;
  failed_envelope.failure =
      PayloadFailure{"host->device copies",        "cuMemcpyHtoDAsync", 700,
                     "CUDA_ERROR_ILLEGAL_ADDRESS", "illegal",           "failed"};
  write_envelope(failed_envelope, failed);
  ASSERT_FALSE(fold_local_copies(failed, local).has_value());
  EXPECT_EQ(read_envelope(failed).value().failure, failed_envelope.failure);

  // An unreadable local payload is an error and changes nothing.
  for (const nlohmann::json& garbage :
       {nlohmann::json::array(),
        nlohmann::json{{"metrics", 3}, {"verify", nlohmann::json::array()}},
        nlohmann::json{{"metrics", nlohmann::json::array()},
                       {"verify", nlohmann::json::array()},
                       {"sizes", "big"}}}) {
    nlohmann::json unchanged = host;
    EXPECT_TRUE(fold_local_copies(unchanged, garbage).has_value()) << garbage.dump();
    EXPECT_EQ(unchanged, host);
  }
}

TEST(ProtocolPayloads, CopiesTogetherRoundTripAndEveryKeyIsRead) {
  const CopiesTogetherPayload together{
      {51.5, 1000, 13000, 10}, {52.5, 41000, 53000, 11}, 64ULL << 20, 1};
  nlohmann::json out = nlohmann::json::object();
  write_copies_together(together, out);
  expect_every_key_read(std::optional<CopiesTogetherPayload>(together), out, &read_copies_together);
  const auto none = read_copies_together(nlohmann::json::object());
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value());
}

TEST(ProtocolPayloads, WorkLinesRoundTripAndEveryKeyIsRead) {
  for (const WorkLine& line :
       {WorkLine{"bandwidth", std::nullopt},
        WorkLine{"streams", "not run: gpu.compute failed and left its CUDA context unusable"}}) {
    nlohmann::json out = {{"metrics", nlohmann::json::array()}};
    write_work_line(line, out);
    EXPECT_EQ(out.at("work"), line.work);
    out.erase("metrics"); // the work's own payload is not the head's
    expect_every_key_read(line, out, &read_work_line);
  }
  // The child's last line (its timeline) is no work's.
  EXPECT_FALSE(read_work_line(nlohmann::json{{"timeline_ms", nlohmann::json::array()}}));
  EXPECT_FALSE(read_work_line(nlohmann::json("compute")));
}

TEST(ProtocolPayloads, WorkListsRoundTripInOrderAndPartsStartEmpty) {
  const std::vector<std::string> works = {"compute", "streams", "bandwidth"};
  EXPECT_EQ(work_list_arg(works), "compute,streams,bandwidth");
  EXPECT_EQ(read_work_list(work_list_arg(works)), works);
  EXPECT_EQ(read_work_list("peers"), std::vector<std::string>{"peers"});
  EXPECT_TRUE(read_work_list("").empty());
  // An empty name stays in the list (the child then refuses it as an unknown work).
  EXPECT_EQ(read_work_list("peers,,nccl"), (std::vector<std::string>{"peers", "", "nccl"}));
  EXPECT_EQ(read_work_list("peers,"), std::vector<std::string>{"peers"});
  const nlohmann::json part = work_part("nccl");
  EXPECT_EQ(part, (nlohmann::json{{"work", "nccl"},
                                  {"metrics", nlohmann::json::array()},
                                  {"verify", nlohmann::json::array()}}));
  EXPECT_EQ(read_work_line(part).value().work, "nccl");
}

TEST(ProtocolPayloads, DeviceListingRoundTripsAndEveryKeyIsRead) {
  DeviceListing two;
  two.init = 0;
  two.init_name = "CUDA_SUCCESS";
  two.devices = {{0, "NVIDIA H200"}, {1, "NVIDIA H200"}};
  expect_every_key_read(two, to_json(two), &read_device_listing);
  EXPECT_EQ(to_json(two), nlohmann::json::parse(R"({"init": 0, "init_name": "CUDA_SUCCESS",
      "devices": [{"ordinal": 0, "name": "NVIDIA H200"}, {"ordinal": 1, "name": "NVIDIA H200"}]})"));
  DeviceListing no_driver;
  no_driver.error = "libcuda.so.1: cannot open shared object file";
  expect_every_key_read(no_driver, to_json(no_driver), &read_device_listing);
  EXPECT_FALSE(read_device_listing(nlohmann::json::object())); // "devices" is always written
}

PeersPayload two_h200_peers() {
  PeersPayload p;
  p.devices = {{0, "NVIDIA H200", "0000:1B:00.0"}, {1, "NVIDIA H200", "0000:3B:00.0"}};
  p.access = {{0, 1, true, 0, true}, {1, 0, true, 0, true}};
  p.pairs = {{0, 1, 64ULL << 20, 12, 371.5, 366.25, 2.5},
             {1, 0, 64ULL << 20, 12, 370.75, 365.5, 2.25}};
  p.sweep = {{0, 1, 1ULL << 20, 32, 180.5}, {1, 0, 256ULL << 20, 8, 372.25}};
  p.gated = true;
  return p;
}

nlohmann::json written_peers(const PeersPayload& p) {
  nlohmann::json out = nlohmann::json::object();
  write_peers(p, out);
  return out;
}

TEST(ProtocolPayloads, PeersRoundTripAndEveryKeyIsRead) {
  expect_every_key_read(two_h200_peers(), written_peers(two_h200_peers()), &read_peers);
  // The keys the report's metrics and bench/p2p_nccl.py read.
  const nlohmann::json written = written_peers(two_h200_peers());
  EXPECT_EQ(written["pairs"][0], nlohmann::json::parse(R"({"from": 0, "to": 1, "bytes": 67108864,
      "copies": 12, "write_gbps": 371.5, "bidir_gbps": 366.25, "latency_us": 2.5})"));
  EXPECT_EQ(written["sweep"][1], nlohmann::json::parse(R"({"from": 1, "to": 0,
      "bytes": 268435456, "copies": 8, "write_gbps": 372.25})"));
  EXPECT_EQ(written["access"][1], nlohmann::json::parse(R"({"from": 1, "to": 0,
      "can_access": true, "performance_rank": 0, "native_atomics": true})"));
  EXPECT_EQ(written["devices"][1], nlohmann::json::parse(R"({"ordinal": 1,
      "name": "NVIDIA H200", "pci_bus_id": "0000:3B:00.0"})"));
  EXPECT_FALSE(read_peers(nlohmann::json::object()));
  // A pair that names a device the payload does not list is an error, not an index out of range.
  nlohmann::json bad = written;
  bad["pairs"][1]["to"] = 7;
  const auto read = read_peers(bad);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("1->7"), std::string::npos) << read.error().message;
  nlohmann::json bad_sweep = written;
  bad_sweep["sweep"][0]["from"] = -1;
  const auto read_sweep = read_peers(bad_sweep);
  ASSERT_FALSE(read_sweep);
  EXPECT_NE(read_sweep.error().message.find("sweep: -1->1"), std::string::npos)
      << read_sweep.error().message;
}

TEST(ProtocolPayloads, NcclRoundTripsAndEveryKeyIsRead) {
  NcclPayload p;
  p.library = "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3";
  p.version = 22803;
  p.ranks = 2;
  p.sizes = {{1ULL << 20, 20, 0.021, 49.9, 49.9}, {256ULL << 20, 20, 0.745, 360.25, 360.25}};
  nlohmann::json written = nlohmann::json::object();
  write_nccl(p, written);
  expect_every_key_read(p, written, &read_nccl);
  EXPECT_EQ(written["sizes"][1], nlohmann::json::parse(R"({"bytes": 268435456, "iterations": 20,
      "ms": 0.745, "algbw_gbps": 360.25, "busbw_gbps": 360.25})"));
  NcclPayload missing;
  missing.missing = "libnccl.so.2: cannot open shared object file";
  nlohmann::json none = nlohmann::json::object();
  write_nccl(missing, none);
  const auto back = read_nccl(none);
  ASSERT_TRUE(back);
  EXPECT_EQ(back.value(), missing);
}

TEST(ProtocolPayloads, CudnnRoundTripsAndEveryKeyIsRead) {
  expect_every_key_read(everything_cudnn(), written_cudnn(everything_cudnn()), &read_cudnn);
  CudnnPayload missing;
  missing.missing = "libcudnn.so.9: cannot open shared object file";
  expect_every_key_read(missing, written_cudnn(missing), &read_cudnn);
  EXPECT_EQ(written_cudnn(missing),
            nlohmann::json({{"cudnn_missing", "libcudnn.so.9: cannot open shared object file"}}));
  // Nothing written (the child stopped before cuDNN): nothing read.
  EXPECT_EQ(read_cudnn(nlohmann::json::object()).value(), CudnnPayload{});
}

TEST(ProtocolPayloads, CudnnJsonKeepsTheKeysTheReportAndComparePyRead) {
  const nlohmann::json out = written_cudnn(everything_cudnn());
  EXPECT_EQ(out["cudnn"], nlohmann::json::parse(R"({"path": "/usr/lib/libcudnn.so.9.10.2",
      "version": 91002, "cudart": 13000, "graph_api": false,
      "graph_api_missing": ["cudnnBackendExecute"]})"));
  EXPECT_EQ(out["convolutions"][0], nlohmann::json::parse(R"({"label": "fp32_nchw_small",
      "shape": "2x16x20x20, 24 filters 3x3, pad 1, stride 1, fp32 NCHW", "gflop": 0.0066,
      "heuristic": {"algo": "IMPLICIT_PRECOMP_GEMM"}})"));
  EXPECT_EQ(out["convolutions"][1], nlohmann::json::parse(R"({"label": "fp16_nhwc_32x256x56x56",
      "shape": "32x256x56x56, 256 filters 3x3, pad 1, stride 1, fp16 NHWC", "gflop": 118.4,
      "heuristic": {"algo": "IMPLICIT_PRECOMP_GEMM", "ms": 0.9, "tflops": 131.5},
      "found": {"algo": "WINOGRAD_NONFUSED", "ms": 0.5, "tflops": 236.8},
      "graph": {"available": true, "offered": 12, "tried": 4, "refused": 1,
                "workspace_too_large": 1, "failed": 1,
                "skipped_statuses": {"CUDNN_STATUS_NOT_SUPPORTED": 2},
                "screened": [{"config": "engine 12, knobs 3=1", "mode": "A", "rank": 0,
                              "screen_ms": 0.41},
                             {"config": "engine 7", "mode": "fallback", "rank": 2,
                              "screen_ms": 0.6}],
                "engine": 12, "knobs": "engine 12, knobs 3=1", "numerical_notes": ["TENSOR_CORE"],
                "mode": "A", "rank": 0, "ms": 0.4, "tflops": 296.0},
      "best": {"api": "graph", "what": "graph API engine 12, knobs 3=1", "ms": 0.4,
               "tflops": 296.0}})"));
  EXPECT_EQ(out["convolutions"][2]["graph"], nlohmann::json({{"available", false}}));
  EXPECT_EQ(out["convolutions"][3]["graph"], nlohmann::json::parse(R"({"available": true,
      "error": {"call": "cudnnBackendFinalize", "status": 3000,
                "name": "CUDNN_STATUS_NOT_SUPPORTED"}})"));
  EXPECT_EQ(out["inputs_on"], "gpu");
  EXPECT_EQ(out["determinism"], nlohmann::json::parse(R"({"label": "fp32_nchw_64x64x56x56",
      "algo": "IMPLICIT_GEMM", "hashes": ["00000000000000ab", "00000000000000cd"],
      "equal": false})"));
  EXPECT_EQ(out["cudnn_failure"], nlohmann::json::parse(R"({"call": "cudnnConvolutionForward",
      "status": 8, "name": "CUDNN_STATUS_EXECUTION_FAILED", "detail": "",
      "stage": "cudnn timing x"})"));
}

TEST(ProtocolPayloads, WritingTheChildFieldsLeavesTheEnvelope) {
  nlohmann::json out = nlohmann::json::object();
  write_envelope(everything_set(), out);
  write_cudnn(everything_cudnn(), out);
  EXPECT_EQ(read_envelope(out).value(), everything_set());
  EXPECT_EQ(read_cudnn(out).value(), everything_cudnn());
}

} // namespace
} // namespace gpucheck::protocol

namespace gpucheck::protocol {
namespace {

MemtestReport memtest_with_errors() {
  MemtestReport m;
  m.free_bytes = 84000000000ULL;
  m.tested_bytes = 79800000000ULL;
  m.chunks = 75;
  m.duration_s = 60.0;
  m.elapsed_s = 60.25;
  m.bytes_moved = 123456789012ULL;
  m.rounds = 3;
  m.patterns = {{"walking_ones", 96}, {"moving_inversions", 12}};
  m.interrupted = true;
  m.error_count = 2;
  m.errors = {{"0x7f2a40001230", "moving_inversions", "0xffffffff", "0xfffffffe"},
              {"0x7f2a40001000", "random", "0x12345678", "0x12345679"}};
  return m;
}

BurnReport burn_with_everything() {
  BurnReport b;
  b.duration_s = 60.0;
  b.elapsed_s = 60.5;
  b.interrupted = false;
  b.cublas = "13.0.2";
  BurnType bf16{"bf16", 8192, 4000, 812.0, 790.0, 15.0, 0, std::nullopt, "9f3a00000000beef"};
  BurnType fp32{"fp32", 8192, 200, 51.0, 50.5, 15.0, 2, BurnMismatch{17, 3}, "0123456789abcdef"};
  b.types = {bf16, fp32};
  b.watch.available = true;
  b.watch.period_ms = 100;
  b.watch.t_ms = {0, 100, 200};
  b.watch.sm_mhz = {1980, 1980, 1755};
  b.watch.mem_mhz = {2619, 2619, 2619};
  b.watch.temp_c = {45, 60, 71};
  b.watch.power_w = {650.5, 690.0, 700.25};
  b.watch.reasons = {0, 4, 0x24};
  b.watch.max_sm_mhz = 1980;
  b.xid_watch = "nvml";
  b.xids = {{12000, 79}};
  return b;
}

template <typename T, typename Write> nlohmann::json written_with(const T& value, Write write) {
  nlohmann::json out = nlohmann::json::object();
  write(value, out);
  return out;
}

TEST(ProtocolPayloads, MemtestRoundTripsAndEveryKeyIsRead) {
  expect_every_key_read(memtest_with_errors(), written_with(memtest_with_errors(), &write_memtest),
                        &read_memtest);
  // The child stopped before its test (its failure says why): no memtest to read.
  const auto missing = read_memtest(nlohmann::json::object());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "memtest is missing");
  EXPECT_FALSE(read_memtest(nlohmann::json::array()));
  EXPECT_FALSE(read_memtest(nlohmann::json{{"memtest", 3}}));
}

TEST(ProtocolPayloads, MemtestReadsTheChildsKeys) {
  // Keys as src/gpu/memtest.cpp writes them (docs/long-level contract), by hand.
  const nlohmann::json line = nlohmann::json::parse(R"({"work": "memtest", "memtest": {
      "free_bytes": 84000000000, "tested_bytes": 79800000000, "chunks": 75,
      "duration_s": 60.0, "elapsed_s": 60.25, "bytes_moved": 123456789012, "rounds": 3,
      "patterns": [{"name": "walking_ones", "passes": 96},
                   {"name": "moving_inversions", "passes": 12}],
      "interrupted": true, "error_count": 2, "errors": [
        {"address": "0x7f2a40001230", "pattern": "moving_inversions", "expected": "0xffffffff",
         "observed": "0xfffffffe"},
        {"address": "0x7f2a40001000", "pattern": "random", "expected": "0x12345678",
         "observed": "0x12345679"}]}})");
  const auto read = read_memtest(line);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read.value(), memtest_with_errors());
  nlohmann::json written = written_with(memtest_with_errors(), &write_memtest);
  written["work"] = "memtest";
  EXPECT_EQ(written, line);
}

TEST(ProtocolPayloads, BurnRoundTripsAndEveryKeyIsRead) {
  expect_every_key_read(burn_with_everything(), written_with(burn_with_everything(), &write_burn),
                        &read_burn);
  EXPECT_EQ(read_burn(nlohmann::json::object()).error().message, "burn is missing");
  // Sample lists of different lengths are no watch to judge.
  nlohmann::json uneven = written_with(burn_with_everything(), &write_burn);
  uneven["burn"]["watch"]["temp_c"].push_back(80);
  const auto bad = read_burn(uneven);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("burn.watch"), std::string::npos) << bad.error().message;
}

TEST(ProtocolPayloads, BurnReadsTheChildsKeys) {
  // Keys as the burn's child writes them, by hand: first_mismatch null or an object.
  const nlohmann::json line = nlohmann::json::parse(R"({"burn": {
      "duration_s": 60.0, "elapsed_s": 60.5, "interrupted": false, "cublas": "13.0.2",
      "types": [
        {"type": "bf16", "n": 8192, "iterations": 4000, "tflops_median": 812.0,
         "tflops_min": 790.0, "elapsed_s": 15.0, "mismatched_iterations": 0,
         "first_mismatch": null, "result_hash": "9f3a00000000beef"},
        {"type": "fp32", "n": 8192, "iterations": 200, "tflops_median": 51.0,
         "tflops_min": 50.5, "elapsed_s": 15.0, "mismatched_iterations": 2,
         "first_mismatch": {"iteration": 17, "words": 3}, "result_hash": "0123456789abcdef"}],
      "watch": {"available": true, "why": "", "period_ms": 100, "t_ms": [0, 100, 200],
                "sm_mhz": [1980, 1980, 1755], "mem_mhz": [2619, 2619, 2619],
                "temp_c": [45, 60, 71], "power_w": [650.5, 690.0, 700.25],
                "reasons": [0, 4, 36], "max_sm_mhz": 1980},
      "xid_watch": "nvml", "xids": [{"t_ms": 12000, "xid": 79}]}})");
  const auto read = read_burn(line);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read.value(), burn_with_everything());
  EXPECT_EQ(written_with(burn_with_everything(), &write_burn), line);
}

/// Whole payloads as the GPU children write them: the envelope, the device, the kernel module and
/// one work's own fields.
nlohmann::json child_payload(const std::function<void(nlohmann::json&)>& own) {
  nlohmann::json out = nlohmann::json::object();
  write_envelope(everything_set(), out);
  out["device"] = to_json(h200());
  out["module"] = to_json(loaded_module());
  own(out);
  return out;
}

// The fuzz corpus of child payloads (tests/fuzz/corpus/child_output/, docs/fuzzing.md) is what
// the writers write: a renamed key updates it (GPUCHECK_UPDATE_FUZZ_CORPUS=1 rewrites the files)
// instead of leaving the fuzzer seeds the parent no longer reads.
TEST(ProtocolPayloads, TheFuzzCorpusHoldsWhatTheChildrenWrite) {
  NcclPayload nccl;
  nccl.library = "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3";
  nccl.version = 22803;
  nccl.ranks = 2;
  nccl.sizes = {{1ULL << 20, 20, 0.021, 49.9, 49.9}, {256ULL << 20, 20, 0.745, 360.25, 360.25}};
  DeviceListing listing;
  listing.init = 0;
  listing.init_name = "CUDA_SUCCESS";
  listing.devices = {{0, "NVIDIA H200"}, {1, "NVIDIA H200"}};
  const std::map<std::string, nlohmann::json> seeds = {
      {"compute.json", child_payload([](nlohmann::json& out) {
         out.update(nlohmann::json(gpu_checks::compute::Payload{51234.4, 1U << 21, 4096}));
       })},
      {"streams.json", child_payload([](nlohmann::json& out) {
         out.update(nlohmann::json(gpu_checks::streams::Payload{{0, -5, -5, 0}, 0.0125}));
       })},
      {"bandwidth.json",
       child_payload([](nlohmann::json& out) { write_bandwidth(everything_bandwidth(), out); })},
      {"cudnn.json",
       child_payload([](nlohmann::json& out) { write_cudnn(everything_cudnn(), out); })},
      {"peers.json",
       child_payload([](nlohmann::json& out) { write_peers(two_h200_peers(), out); })},
      {"nccl.json", child_payload([&](nlohmann::json& out) { write_nccl(nccl, out); })},
      {"memtest.json",
       child_payload([](nlohmann::json& out) { write_memtest(memtest_with_errors(), out); })},
      {"burn.json",
       child_payload([](nlohmann::json& out) { write_burn(burn_with_everything(), out); })},
      {"device_listing.json", to_json(listing)},
  };
  const std::filesystem::path dir =
      std::filesystem::path(GPUCHECK_SOURCE_DIR) / "tests/fuzz/corpus/child_output";
  const bool update = std::getenv("GPUCHECK_UPDATE_FUZZ_CORPUS") != nullptr;
  for (const auto& [name, payload] : seeds) {
    const std::filesystem::path file = dir / name;
    if (update) {
      std::filesystem::create_directories(dir);
      std::ofstream(file) << payload.dump(2) << "\n";
      continue;
    }
    std::ifstream in(file);
    ASSERT_TRUE(in) << file << " is missing: run with GPUCHECK_UPDATE_FUZZ_CORPUS=1";
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_EQ(nlohmann::json::parse(text), payload)
        << file << " differs from what the children write: run with GPUCHECK_UPDATE_FUZZ_CORPUS=1";
  }
}

} // namespace
} // namespace gpucheck::protocol
