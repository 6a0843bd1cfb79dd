#pragma once
/// A report with identifying values planted in many fields and in free text, fresh and random
/// for each test run, for the redaction tests (redact_test.cpp, bundle_test.cpp).

#include <fmt/format.h>

#include <random>
#include <string>
#include <vector>

#include "gpucheck/model/report.hpp"

namespace gpucheck::testing {

struct PlantedIdentifiers {
  std::string host;      ///< "node-4711", also as "node-4711.corp.example"
  std::string user;      ///< in /home/<user>/ paths
  std::string mac_user;  ///< in /Users/<mac_user>/ paths
  std::string hint_user; ///< known only from RedactionHints, written in free text
  std::string ipv4;
  std::string ipv6;
  std::string ipv6_full;
  std::string mac;
  std::string serial0;
  std::string serial1;
  std::string uuid0; ///< bare UUID of GPU 0 ("GPU-" + uuid0 in the snapshot)
  std::string uuid1;
  std::string mig_uuid;
  std::string stray_uuid; ///< a UUID that names no GPU (e.g. a filesystem's)
  unsigned seed = 0;

  /// Every planted value, to search for in redacted output.
  [[nodiscard]] std::vector<std::string> all() const {
    return {host, user,    mac_user, hint_user, ipv4,  ipv6,     ipv6_full,
            mac,  serial0, serial1,  uuid0,     uuid1, mig_uuid, stray_uuid};
  }
};

inline PlantedIdentifiers plant_identifiers() {
  PlantedIdentifiers p;
  p.seed = std::random_device{}();
  std::mt19937 rng(p.seed);
  const auto number = [&rng](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(rng);
  };
  const auto hex = [&](int digits) {
    std::string out;
    for (int i = 0; i < digits; ++i) {
      out += "0123456789abcdef"[number(0, 15)];
    }
    return out;
  };
  const auto word = [&](int letters) {
    std::string out;
    for (int i = 0; i < letters; ++i) {
      out += static_cast<char>('a' + number(0, 25));
    }
    return out;
  };
  const auto uuid = [&] {
    return fmt::format("{}-{}-{}-{}-{}", hex(8), hex(4), hex(4), hex(4), hex(12));
  };
  p.host = fmt::format("node-{}{}", word(4), number(10, 99));
  p.user = word(6);
  p.mac_user = word(7);
  p.hint_user = "svc" + word(5);
  p.ipv4 = fmt::format("10.{}.{}.{}", number(0, 255), number(0, 255), number(1, 254));
  p.ipv6 = fmt::format("fe80::{}:{}", hex(4), hex(3) + "1");
  p.ipv6_full = fmt::format("2001:db8:{}:{}:{}:{}:{}:{}", hex(4), hex(4), hex(4), hex(4), hex(4),
                            number(1, 9));
  p.mac = fmt::format("{}:{}:{}:{}:{}:{}", hex(2), hex(2), hex(2), hex(2), hex(2), hex(2));
  p.serial0 = fmt::format("16523{}", number(10000000, 99999999));
  p.serial1 = fmt::format("13209{}", number(10000000, 99999999));
  p.uuid0 = uuid();
  p.uuid1 = uuid();
  p.mig_uuid = uuid();
  p.stray_uuid = uuid();
  return p;
}

/// A two-GPU report carrying every planted value in structured fields and free text.
inline Report planted_report(const PlantedIdentifiers& p) {
  Report report;
  report.context.tool_version = "0.1.0";
  report.context.generated_at = "2026-11-21T12:00:00Z";
  report.context.mode = "standard";
  report.context.argv = {"--from-snapshot", "/home/" + p.user + "/snapshots/today.json"};
  SystemSnapshot& s = report.snapshot;
  s.host.hostname = p.host + ".corp.example";
  s.host.os = "Ubuntu 24.04.1 LTS";
  s.host.kernel = "6.8.0-45-generic";
  s.environment.variables["LD_LIBRARY_PATH"] =
      "/home/" + p.user + "/miniconda3/lib:/usr/local/cuda/lib64";
  s.environment.variables["NCCL_SOCKET_IFNAME"] = "eth0";
  s.environment.container.kind = "docker";
  s.environment.container.evidence = {"interface eth0 ether " + p.mac + " inet " + p.ipv4,
                                      "host " + p.host + " is the container's parent"};
  s.kernel_module.version = "580.159.04";
  s.kernel_module.version_text = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                 "580.159.04  Release Build  (builder@" +
                                 p.host + ")";
  s.nvml.library.loaded = true;
  s.nvml.library.path = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1";
  s.nvml.library.version = "13.580.159.04";
  ChildFailure failure;
  failure.kind = ChildFailureKind::exit;
  failure.detail = "the cuDNN child exited with status 1";
  failure.stderr_tail = "connecting to [" + p.ipv6_full + "]:5000 from " + p.ipv6 + "\ndevice " +
                        p.stray_uuid + " busy; std::string at 12:00:00";
  for (int i = 0; i < 2; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    gpu.cuda_ordinal = i;
    gpu.name = "NVIDIA H200";
    gpu.uuid = "GPU-" + (i == 0 ? p.uuid0 : p.uuid1);
    gpu.serial = i == 0 ? p.serial0 : p.serial1;
    gpu.pci_bus_id = i == 0 ? "0000:1b:00.0" : "0000:3b:00.0";
    s.gpus.push_back(gpu);
    CudaDevice device;
    device.ordinal = i;
    device.name = gpu.name;
    device.uuid = gpu.uuid;
    device.pci_bus_id = gpu.pci_bus_id;
    s.cuda.devices.push_back(device);
  }
  LibraryFamily cudnn;
  cudnn.family = "cudnn";
  cudnn.load.name = "libcudnn.so.9";
  cudnn.load.loaded = true;
  cudnn.load.path = "/home/" + p.user + "/miniconda3/lib/libcudnn.so.9";
  cudnn.load.version = "9.19.0";
  cudnn.failure = failure;
  LibraryCopy copy;
  copy.path = cudnn.load.path;
  copy.real_path = "/Users/" + p.mac_user + "/venv/lib/libcudnn.so.9.19.0";
  copy.origin = "conda";
  copy.version = "9.19.0";
  cudnn.copies.push_back(copy);
  s.libraries.push_back(cudnn);
  LibraryFamily cublas;
  cublas.family = "cublas";
  cublas.load.name = "libcublas.so.12";
  cublas.load.loaded = true;
  cublas.load.path = "/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1";
  cublas.load.version = "12.8.4.1";
  s.libraries.push_back(cublas);
  s.probe_issues.push_back(ProbeIssue{"nvml", "NVML on " + p.host + " answered slowly"});

  CheckResult ecc;
  ecc.check_id = "gpu.ecc";
  ecc.title = "ECC and memory health";
  ecc.status = Status::fail;
  ecc.gpu_index = 1;
  ecc.summary = "GPU-" + p.uuid1 + " (serial " + p.serial1 + ") has uncorrected ECC errors";
  ecc.findings.push_back(Finding{"gpu.ecc_uncorrected", Severity::fail,
                                 "2 uncorrected errors on GPU-" + p.uuid1 + ", MIG-" + p.mig_uuid +
                                     "; reported to " + p.ipv4 + " by " + p.hint_user,
                                 "drain the node " + p.host + " and replace board " + p.serial1,
                                 1});
  report.results.push_back(ecc);
  CheckResult libs;
  libs.check_id = "libs.cudnn";
  libs.title = "cuDNN loads and matches";
  libs.status = Status::warn;
  libs.summary = "cuDNN from /home/" + p.user + "/miniconda3/lib wins over the system copy";
  libs.findings.push_back(Finding{"libs.cudnn_multiple_copies", Severity::warn,
                                  "copies in /home/" + p.user + "/miniconda3/lib and /Users/" +
                                      p.mac_user + "/venv/lib; NIC " + p.mac,
                                  "remove one", std::nullopt});
  libs.metrics.push_back(Metric{"load_ms", 12.0, "ms", "measured on " + p.host});
  report.results.push_back(libs);
  report.summary = summarize(report.results);
  return report;
}

} // namespace gpucheck::testing
