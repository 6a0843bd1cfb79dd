// gpu.memtest's judge, findings, metrics and registration.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "findings/catalog.hpp"
#include "gpu_checks/memtest/memtest.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::gpu_checks::memtest {

namespace {

constexpr FindingSpec k_findings[] = {
    {k_coverage_low, Severity::warn, "memory test covered too little memory",
     "The memory test could allocate less than 95% of the GPU's free memory, so part of the "
     "memory was not tested and may hold faulty cells. Usual causes: another process or the "
     "driver took memory while the test allocated, or the free memory was fragmented.",
     "GPU {0}: the memory test covered {1} GiB, {2}% of the {3} GiB free; the floor is {4}%",
     "nothing says the GPU is faulty; run the test again when no other process holds GPU memory "
     "(nvidia-smi lists them)",
     where(k_where_gpu_index, "GiB tested", "that as a percentage of the free memory", "GiB free",
           "the floor, in percent")},
    {k_errors, Severity::fail, "GPU memory does not hold what was written",
     "The memory test wrote known patterns into nearly all free device memory and read words "
     "back that differ from what was written: cells that flip, stuck bits or addressing faults. "
     "ECC may correct single bits, but a word that reads back wrong here is a memory fault.",
     "GPU {0} ({1}): {2} read back wrong in the memory test, at addresses {3} to {4}, "
     "{5}; first: expected {6}, observed {7}",
     "drain the GPU (no new jobs on it); read its ECC counters and row remapping with `nvidia-smi "
     "-q -d ECC,ROW_REMAPPER -i {8}`; reset the GPU (`nvidia-smi -r -i {8}`) or reboot so that "
     "pending row remaps apply, and run `gpucheck --level long --only gpu.memtest` again; if "
     "errors remain, have the GPU replaced (RMA)",
     where(k_where_gpu_index, "GPU model (name)", "how many words read back wrong",
           "lowest address wrong", "highest address wrong",
           "the patterns that found errors (\"patterns walking-ones, random\")",
           "the first error's expected word", "the first error's observed word",
           "the GPU's PCI bus id (or index), for nvidia-smi -i"),
     Drain::yes},
};

/// Bytes written plus read per second: 0.6 of the memory bandwidth, 30% under what healthy
/// H100s and H200s reach (docs/checks.md, "Expected figures").
constexpr checks::DatasheetFloor k_throughput_floor{&compat::GpuModelSpec::hbm_gbps, 1.0, 0.6,
                                                    "memory bandwidth {} GB/s", false};

constexpr MetricSpec k_metrics[] = {
    {"memtest_throughput_gbps", "GB/s", k_throughput_floor},
    {"memtest_coverage_percent", "%"},
};

constexpr VerifySpec k_verify[] = {{k_verify_kind, std::nullopt}};

constexpr GpuCheck<Payload> k_check{
    .info = {"gpu.memtest", "GPU memory holds every pattern",
             "Long level: writes the classic memory-test patterns (walking ones and zeros, "
             "moving inversions, random data, address in address, modulo-20) into at least 95% "
             "of the free device memory for --duration and checks every word on the GPU; names "
             "any word that reads back wrong.",
             CheckKind::active, Level::long_},
    .work = "memtest",
    .mode = "gpu-memtest",
    // It sizes itself to the GPU's free memory (not budgeted).
    .min_mib = 64,
    .wanted_mib = 64,
    .prepare_mib = 64,
    .needs_kernels = true,
    .run = &work,
    .judge = &judge,
    .findings = k_findings,
    .metrics = k_metrics,
    .verify = k_verify,
    .amend_setup = &amend_setup,
    .listed = Listed::before_long,
    .child = protocol::WorkChild::long_level,
    .alone = true,
    .phase = "memory test",
};

constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;

double gib(uint64_t bytes) {
  return static_cast<double>(bytes) / k_gib;
}

std::optional<uint64_t> parse_hex(const std::string& text) {
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str() + 2, &end, 16);
  if (end == text.c_str() + 2 || *end != '\0') {
    return std::nullopt;
  }
  return value;
}

/// The finding of the words read back wrong: their count, address range, patterns, the first.
Finding errors_finding(const checks::GpuTarget& gpu, const Payload& report) {
  std::optional<uint64_t> lowest;
  std::optional<uint64_t> highest;
  std::vector<std::string> patterns;
  for (const protocol::MemtestError& e : report.errors) {
    if (const auto at = parse_hex(e.address)) {
      lowest = std::min(lowest.value_or(*at), *at);
      highest = std::max(highest.value_or(*at), *at);
    }
    if (std::find(patterns.begin(), patterns.end(), e.pattern) == patterns.end()) {
      patterns.push_back(e.pattern);
    }
  }
  const std::string count = report.errors.size() < report.error_count
                                ? fmt::format("{} words (the first {} recorded)",
                                              report.error_count, report.errors.size())
                                : plural(report.error_count, "word");
  const auto address = [](const std::optional<uint64_t>& a) {
    return a ? fmt::format("0x{:x}", *a) : std::string("unknown");
  };
  const bool have_first = !report.errors.empty();
  // How nvidia-smi names the GPU (-i): its PCI bus id when known, else its index.
  const std::string smi_id =
      gpu.pci_bus_id.empty() ? std::to_string(gpu.gpu_index) : gpu.pci_bus_id;
  return make_finding(
      k_errors, gpu.gpu_index, gpu.gpu_index, gpu.name.empty() ? std::string("?") : gpu.name, count,
      address(lowest), address(highest),
      patterns.empty() ? std::string("patterns unknown")
                       : fmt::format("{} {}", patterns.size() == 1 ? "pattern" : "patterns",
                                     fmt::join(patterns, ", ")),
      have_first ? report.errors.front().expected : std::string("unknown"),
      have_first ? report.errors.front().observed : std::string("unknown"), smi_id);
}
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

void amend_setup(const checks::GpuTarget& gpu, const ChildReport& child, checks::Judgement& setup) {
  const std::optional<protocol::PayloadFailure>& failure = child.envelope.failure;
  if (failure && failure->stage == "memtest allocate" && failure->call.empty() &&
      !gpu.other_processes.empty()) {
    setup = checks::Judgement{};
    setup.skipped = true;
    setup.summary = fmt::format("GPU {}: not tested beside other processes: {}", gpu.gpu_index,
                                failure->message);
  }
}

checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& report,
                        const ChildReport& /*child*/) {
  checks::Judgement judgement;
  const int index = gpu.gpu_index;
  const double coverage = report.free_bytes > 0 ? static_cast<double>(report.tested_bytes) /
                                                      static_cast<double>(report.free_bytes)
                                                : 0.0;
  const double gbps =
      report.elapsed_s > 0 ? static_cast<double>(report.bytes_moved) / report.elapsed_s / 1e9 : 0.0;
  std::vector<std::string> names;
  for (const protocol::MemtestPattern& p : report.patterns) {
    names.push_back(p.name);
  }
  const std::string gpu_words = gpu.name.empty()
                                    ? fmt::format("GPU {}", gpu.gpu_index)
                                    : fmt::format("GPU {} ({})", gpu.gpu_index, gpu.name);
  judgement.summary = fmt::format(
      "{}: {:.1f} GiB tested ({:.1f}% of {:.1f} GiB free) under {} ({}), {} in {:.1f} s at "
      "{:.0f} GB/s",
      gpu_words, gib(report.tested_bytes), 100.0 * coverage, gib(report.free_bytes),
      plural(report.patterns.size(), "pattern"),
      names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")),
      plural(report.rounds, "full round"), report.elapsed_s, gbps);
  if (report.error_count == 0) {
    judgement.summary += "; every word read back right";
  } else {
    judgement.summary += fmt::format("; {} read back WRONG", plural(report.error_count, "word"));
    judgement.findings.push_back(errors_finding(gpu, report));
  }
  if (report.interrupted) {
    judgement.summary += fmt::format("; stopped by the user after {:.1f} of {:.0f} s",
                                     report.elapsed_s, report.duration_s);
    judgement.findings.push_back(make_finding(
        codes::k_gpu_long_interrupted, index, index, "the memory test",
        fmt::format("{:.1f}", report.elapsed_s), fmt::format("{:.0f}", report.duration_s),
        fmt::format("{:.1f} GiB tested under {} in {}; the rest of the time was not tested",
                    gib(report.tested_bytes), plural(report.patterns.size(), "pattern"),
                    plural(report.rounds, "full round"))));
  } else if (coverage < k_coverage_floor) {
    judgement.findings.push_back(make_finding(
        k_coverage_low, index, index, fmt::format("{:.1f}", gib(report.tested_bytes)),
        fmt::format("{:.1f}", 100.0 * coverage), fmt::format("{:.1f}", gib(report.free_bytes)),
        fmt::format("{:.0f}", 100.0 * k_coverage_floor)));
  }
  return judgement;
}

} // namespace gpucheck::gpu_checks::memtest

namespace gpucheck::gpu_checks {
Registration memtest_registration() {
  return registration<memtest::k_check>();
}
} // namespace gpucheck::gpu_checks
