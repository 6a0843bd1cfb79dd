// Per-GPU checks: gpu.persistence, gpu.compute_mode, gpu.mig, gpu.ecc, gpu.retired_pages,
// gpu.remapped_rows, gpu.pcie_link, gpu.clocks, gpu.memory.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

using GpuChange = std::function<void(GpuInfo&)>;

/// Changes GPU 1 of the two-GPU healthy snapshot.
std::function<void(SystemSnapshot&)> on_gpu1(GpuChange change) {
  return [change](SystemSnapshot& s) { change(s.gpus.at(1)); };
}

const std::vector<CheckDef>& gpu_checks() {
  static const std::vector<CheckDef> k_checks = {
      checks::gpu_persistence_check(),   checks::gpu_compute_mode_check(),
      checks::gpu_mig_check(),           checks::gpu_ecc_check(),
      checks::gpu_retired_pages_check(), checks::gpu_remapped_rows_check(),
      checks::gpu_pcie_link_check(),     checks::gpu_clocks_check(),
      checks::gpu_memory_check()};
  return k_checks;
}

TEST(GpuChecks, HealthyH200RaisesNoWarning) {
  // Driver 580.159.04, persistence on, ECC on with 0 errors, PCIe gen5 x16 idling at gen1 x16.
  const SystemSnapshot s = healthy_h200(2);
  for (const CheckDef& check : gpu_checks()) {
    SCOPED_TRACE(check.info.id);
    const std::vector<CheckResult> results = run_check(check, s);
    ASSERT_EQ(results.size(), 2U);
    for (std::size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(results[i].gpu_index, static_cast<int>(i));
      EXPECT_TRUE(results[i].findings.empty()) << results[i].summary;
      // Retired pages are not reported on an H200 (it remaps rows): skip, never pass.
      const Status expected = check.info.id == "gpu.retired_pages" ? Status::skip : Status::pass;
      EXPECT_EQ(to_string(results[i].status), to_string(expected)) << results[i].summary;
    }
  }
}

TEST(GpuChecks, NoGpuFactsSkip) {
  SystemSnapshot s = healthy_h200();
  s.gpus.clear();
  s.nvml.init_result = 9;
  s.nvml.init_result_name = "DRIVER_NOT_LOADED";
  for (const CheckDef& check : gpu_checks()) {
    SCOPED_TRACE(check.info.id);
    const std::vector<CheckResult> results = run_check(check, s);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].status, Status::skip);
    EXPECT_EQ(results[0].summary, "no per-GPU facts: nvmlInit_v2 failed (DRIVER_NOT_LOADED)");
  }
}

TEST(GpuChecks, NvmlProbeCrashIsAnError) {
  SystemSnapshot s = healthy_h200();
  s.gpus.clear();
  s.nvml.failure = crashed("SIGBUS", 7, "Bus error");
  for (const CheckDef& check : gpu_checks()) {
    SCOPED_TRACE(check.info.id);
    const std::vector<CheckResult> results = run_check(check, s);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].status, Status::error);
    EXPECT_EQ(codes_of(results[0]), std::vector<std::string>{"probe.crashed"});
    EXPECT_NE(results[0].findings[0].message.find("SIGBUS"), std::string::npos);
  }
}

TEST(GpuPersistenceCheck, Table) {
  auto off = [](GpuInfo& g) { g.persistence_mode = false; };
  const CheckCase cases[] = {
      {"on", nullptr, Status::pass, {}},
      {"not reported", on_gpu1([](GpuInfo& g) { g.persistence_mode.reset(); }), Status::skip, {}},
      {"off on a multi-GPU host: warn", on_gpu1(off), Status::warn, {"gpu.persistence_off"}},
      {"off in a container: info",
       [off](SystemSnapshot& s) {
         off(s.gpus[1]);
         s.environment.container.kind = "docker";
       },
       Status::pass,
       {"gpu.persistence_off"}},
  };
  run_cases(checks::gpu_persistence_check(), healthy_h200(2), cases, 1);
}

TEST(GpuPersistenceCheck, SingleGpuIsInfo) {
  SystemSnapshot s = healthy_h200(1);
  s.gpus[0].persistence_mode = false;
  const CheckResult result = run_check(checks::gpu_persistence_check(), s).front();
  EXPECT_EQ(result.status, Status::pass);
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].severity, Severity::info);
  EXPECT_EQ(result.findings[0].gpu_index, 0);
}

TEST(GpuComputeModeCheck, Table) {
  auto mode = [](std::string m) { return on_gpu1([m](GpuInfo& g) { g.compute_mode = m; }); };
  const CheckCase cases[] = {
      {"default", nullptr, Status::pass, {}},
      {"not reported", on_gpu1([](GpuInfo& g) { g.compute_mode.reset(); }), Status::skip, {}},
      {"prohibited", mode("prohibited"), Status::fail, {"gpu.compute_prohibited"}},
      {"exclusive process", mode("exclusive_process"), Status::warn, {"gpu.compute_exclusive"}},
  };
  run_cases(checks::gpu_compute_mode_check(), healthy_h200(2), cases, 1);
}

TEST(GpuMigCheck, Table) {
  const CheckCase cases[] = {
      {"disabled", nullptr, Status::pass, {}},
      {"not supported", on_gpu1([](GpuInfo& g) { g.mig_enabled.reset(); }), Status::skip, {}},
      {"enabled without instance",
       on_gpu1([](GpuInfo& g) {
         g.mig_enabled = true;
         g.mig_pending = true;
         g.mig_instance_count = 0;
       }),
       Status::fail,
       {"gpu.mig_no_instance"}},
      {"enabled with instances",
       on_gpu1([](GpuInfo& g) {
         g.mig_enabled = true;
         g.mig_pending = true;
         g.mig_instance_count = 7;
       }),
       Status::pass,
       {}},
      {"enable pending",
       on_gpu1([](GpuInfo& g) { g.mig_pending = true; }),
       Status::warn,
       {"gpu.mig_change_pending"}},
  };
  run_cases(checks::gpu_mig_check(), healthy_h200(2), cases, 1);
}

TEST(GpuEccCheck, Table) {
  const CheckCase cases[] = {
      {"on, no error", nullptr, Status::pass, {}},
      {"corrected errors only",
       on_gpu1([](GpuInfo& g) { g.ecc_corrected_volatile = 12; }),
       Status::pass,
       {}},
      {"uncorrected errors",
       on_gpu1([](GpuInfo& g) { g.ecc_uncorrected_volatile = 3; }),
       Status::fail,
       {"gpu.ecc_uncorrected"}},
      {"not supported", on_gpu1([](GpuInfo& g) { g.ecc_enabled.reset(); }), Status::skip, {}},
      {"off: info",
       on_gpu1([](GpuInfo& g) { g.ecc_enabled = false; }),
       Status::pass,
       {"gpu.ecc_disabled"}},
      {"counters missing",
       on_gpu1([](GpuInfo& g) { g.ecc_uncorrected_volatile.reset(); }),
       Status::skip,
       {}},
  };
  run_cases(checks::gpu_ecc_check(), healthy_h200(2), cases, 1);
}

TEST(GpuRetiredPagesCheck, Table) {
  auto pages = [](int dbe, int sbe, bool pending) {
    return on_gpu1([=](GpuInfo& g) {
      g.retired_pages_dbe = dbe;
      g.retired_pages_sbe = sbe;
      g.retired_pages_pending = pending;
    });
  };
  const CheckCase cases[] = {
      {"not reported (H200)", nullptr, Status::skip, {}},
      {"a few retired", pages(2, 5, false), Status::pass, {}},
      {"pending", pages(1, 0, true), Status::warn, {"gpu.retired_pages_pending"}},
      {"59 is below the limit", pages(30, 29, false), Status::pass, {}},
      {"60 reaches the limit", pages(30, 30, false), Status::fail, {"gpu.retired_pages_limit"}},
      {"limit and pending",
       pages(40, 30, true),
       Status::fail,
       {"gpu.retired_pages_limit", "gpu.retired_pages_pending"}},
  };
  run_cases(checks::gpu_retired_pages_check(), healthy_h200(2), cases, 1);
}

TEST(GpuRemappedRowsCheck, Table) {
  const CheckCase cases[] = {
      {"nothing pending", nullptr, Status::pass, {}},
      {"not reported",
       on_gpu1([](GpuInfo& g) {
         g.remapped_rows_pending.reset();
         g.remapped_rows_failure.reset();
       }),
       Status::skip,
       {}},
      {"pending",
       on_gpu1([](GpuInfo& g) {
         g.remapped_rows_pending = true;
         g.remapped_rows_uncorrectable = 1;
       }),
       Status::warn,
       {"gpu.row_remap_pending"}},
      {"failure",
       on_gpu1([](GpuInfo& g) { g.remapped_rows_failure = true; }),
       Status::fail,
       {"gpu.row_remap_failed"}},
  };
  run_cases(checks::gpu_remapped_rows_check(), healthy_h200(2), cases, 1);
}

TEST(GpuPcieLinkCheck, Table) {
  const CheckCase cases[] = {
      {"idle gen1 of gen5 at x16: no alarm", nullptr, Status::pass, {}},
      {"gen5 x16 under load",
       on_gpu1([](GpuInfo& g) { g.pcie_gen_current = 5; }),
       Status::pass,
       {}},
      {"x8 of x16",
       on_gpu1([](GpuInfo& g) { g.pcie_width_current = 8; }),
       Status::warn,
       {"gpu.pcie_width_degraded"}},
      {"NVML silent, sysfs says x4",
       [](SystemSnapshot& s) {
         s.gpus[1].pcie_width_current.reset();
         s.gpus[1].pcie_width_max.reset();
         s.kernel_module.pci_devices[1].current_link_width = 4;
       },
       Status::warn,
       {"gpu.pcie_width_degraded"}},
      {"no width anywhere",
       [](SystemSnapshot& s) {
         s.gpus[1].pcie_width_current.reset();
         s.kernel_module.pci_devices.clear();
       },
       Status::skip,
       {}},
  };
  run_cases(checks::gpu_pcie_link_check(), healthy_h200(2), cases, 1);
}

TEST(GpuPcieLinkCheck, DegradedNamesWidths) {
  SystemSnapshot s = healthy_h200(1);
  s.gpus[0].pcie_width_current = 8;
  const CheckResult result = run_check(checks::gpu_pcie_link_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "GPU 0 (NVIDIA H200, 00000000:1B:00.0) runs its PCIe link at x8, below its maximum "
            "x16 (generation 1 of 5)");
}

TEST(GpuClocksCheck, Table) {
  auto reasons = [](uint64_t bits) {
    return on_gpu1([bits](GpuInfo& g) { g.clock_event_reasons = bits; });
  };
  const CheckCase cases[] = {
      {"idle", nullptr, Status::pass, {}},
      {"not reported",
       on_gpu1([](GpuInfo& g) { g.clock_event_reasons.reset(); }),
       Status::skip,
       {}},
      {"SW power cap alone: info", reasons(0x4), Status::pass, {"gpu.clocks_power_capped"}},
      {"HW thermal", reasons(0x40 | 0x8), Status::warn, {"gpu.clocks_thermal_slowdown"}},
      {"SW thermal", reasons(0x20), Status::warn, {"gpu.clocks_thermal_slowdown"}},
      {"power brake", reasons(0x80 | 0x8), Status::warn, {"gpu.clocks_hw_slowdown"}},
      {"HW slowdown alone", reasons(0x8), Status::warn, {"gpu.clocks_hw_slowdown"}},
      {"thermal and brake under power cap",
       reasons(0x4 | 0x40 | 0x80),
       Status::warn,
       {"gpu.clocks_thermal_slowdown", "gpu.clocks_hw_slowdown"}},
      {"applications clocks setting is not a slowdown", reasons(0x2), Status::pass, {}},
  };
  run_cases(checks::gpu_clocks_check(), healthy_h200(2), cases, 1);
}

TEST(GpuMemoryCheck, Table) {
  auto used = [](double fraction, std::vector<GpuProcess> processes) {
    return on_gpu1([=](GpuInfo& g) {
      g.memory_used_bytes = static_cast<uint64_t>(fraction * static_cast<double>(141 * k_gib));
      g.processes = processes;
    });
  };
  const CheckCase cases[] = {
      {"nearly empty", nullptr, Status::pass, {}},
      {"89% used", used(0.89, {}), Status::pass, {}},
      {"95% used by a running process",
       used(0.95, {GpuProcess{4242, 130 * k_gib, "python3"}}),
       Status::pass,
       {"gpu.memory_in_use"}},
      {"95% used, nobody visible", used(0.95, {}), Status::warn, {"gpu.memory_held_by_others"}},
      {"not reported", on_gpu1([](GpuInfo& g) { g.memory_used_bytes.reset(); }), Status::skip, {}},
  };
  run_cases(checks::gpu_memory_check(), healthy_h200(2), cases, 1);
}

TEST(GpuMemoryCheck, NamesPidsAndProcesses) {
  SystemSnapshot s = healthy_h200(1);
  s.gpus[0].memory_used_bytes = 135 * k_gib;
  s.gpus[0].processes = {GpuProcess{4242, 100 * k_gib, "python3"},
                         GpuProcess{977, 34 * k_gib, "vllm"}};
  const CheckResult result = run_check(checks::gpu_memory_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "GPU 0 (NVIDIA H200, 00000000:1B:00.0): 135.0 GiB of 141.0 GiB memory (95%) is in "
            "use; held by PID 4242 python3 (100.0 GiB), PID 977 vllm (34.0 GiB)");
  EXPECT_NE(result.findings[0].remedy.find("PIDs 4242 977"), std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
