#include "render/text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "golden/scenarios.hpp"
#include "render/wrap.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::render {
namespace {

using testing::golden_scenarios;
using testing::load_recorded_snapshot;

using testing::lines_of;

std::string strip_ansi(const std::string& text) {
  return std::regex_replace(text, std::regex("\x1b\\[[0-9;]*m"), "");
}

/// The text with every run of spaces and newlines made one space: phrases survive wrapping.
std::string flattened(const std::string& text) {
  return std::regex_replace(text, std::regex("[ \n]+"), " ");
}

size_t line_index(const std::vector<std::string>& lines, const std::string& needle) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(needle) != std::string::npos) {
      return i;
    }
  }
  return std::string::npos;
}

CheckResult text_result(std::string id, Status status, std::string summary,
                        std::vector<Finding> findings = {}, std::optional<int> gpu = std::nullopt) {
  CheckResult r;
  r.check_id = std::move(id);
  r.title = "Title of " + r.check_id;
  r.status = status;
  r.summary = std::move(summary);
  r.findings = std::move(findings);
  r.gpu_index = gpu;
  return r;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

Report report_with(std::vector<CheckResult> results) {
  Report report;
  report.context.tool_version = "0.1.0";
  report.context.mode = "replay";
  report.context.generated_at = "2026-11-21T12:00:00Z";
  report.snapshot = load_recorded_snapshot("h200_healthy");
  report.results = std::move(results);
  report.summary = summarize(report.results);
  return report;
}

TEST(TextRenderer, EveryLineFitsEightyColumnsUnlessItIsOneLongPath) {
  for (const testing::Scenario& scenario : golden_scenarios()) {
    for (bool verbose : {false, true}) {
      TextStyle style;
      style.verbose = verbose;
      style.color = true;
      for (const std::string& line : lines_of(render_text(scenario.report, style))) {
        // An unbreakable word (a path) may overflow; then it sits alone after the margin (the
        // 10-column label, or an indent up to "        fix: ").
        const std::string plain = strip_ansi(line);
        const bool lone_word = plain.find_last_of(' ') < 14;
        EXPECT_TRUE(visible_width(line) <= 80 || lone_word)
            << scenario.name << (verbose ? " (verbose)" : "") << ": " << plain;
      }
    }
  }
}

TEST(TextRenderer, ColourAddsOnlyAnsiSequences) {
  for (const testing::Scenario& scenario : golden_scenarios()) {
    TextStyle plain_style;
    TextStyle colour_style;
    colour_style.color = true;
    const std::string plain = render_text(scenario.report, plain_style);
    const std::string coloured = render_text(scenario.report, colour_style);
    EXPECT_EQ(plain.find('\x1b'), std::string::npos) << scenario.name;
    EXPECT_NE(coloured.find("\x1b[3"), std::string::npos) << scenario.name;
    EXPECT_EQ(strip_ansi(coloured), plain) << scenario.name;
  }
}

TEST(TextRenderer, IsDeterministic) {
  const Report report = golden_scenarios().back().report;
  EXPECT_EQ(render_text(report, TextStyle{}), render_text(report, TextStyle{}));
}

TEST(TextRenderer, FindingContinuationLinesUseAHangingIndentWithoutTheBullet) {
  const std::string message =
      "the first sentence of a long message that needs several lines to say what is wrong "
      "with this machine and why";
  const std::string remedy = "do this first, then do that, then reboot the machine and run "
                             "gpucheck again to confirm that everything works";
  const Report report = report_with({text_result(
      "driver.nvml", Status::fail, "NVML failed",
      {Finding{"driver.version_mismatch", Severity::fail, message, remedy, std::nullopt}})});
  const std::vector<std::string> lines = lines_of(render_text(report, TextStyle{}));
  const size_t bullet = line_index(lines, "- driver.version_mismatch (fail): the first");
  ASSERT_NE(bullet, std::string::npos);
  ASSERT_LT(bullet + 4, lines.size());
  EXPECT_EQ(lines[bullet].rfind("      - ", 0), 0u) << lines[bullet];
  size_t i = bullet + 1;
  for (; lines[i].find("fix:") == std::string::npos; ++i) {
    EXPECT_EQ(lines[i].rfind("        ", 0), 0u) << lines[i];
    EXPECT_NE(lines[i][8], ' ') << lines[i];
    EXPECT_EQ(lines[i].find('-'), std::string::npos) << "bullet repeated: " << lines[i];
  }
  EXPECT_GT(i, bullet + 1) << "the message should have wrapped";
  EXPECT_EQ(lines[i].rfind("        fix: do this first", 0), 0u) << lines[i];
  EXPECT_EQ(lines[i + 1].rfind("             ", 0), 0u) << "fix continuation: " << lines[i + 1];
  EXPECT_NE(lines[i + 1][13], ' ');
  EXPECT_EQ(lines[i + 1].find("fix:"), std::string::npos);
}

TEST(TextRenderer, ProblemsComeFirstWorstKindFirstThenPassesThenSkips) {
  const Report report = report_with({
      text_result("a.pass", Status::pass, "fine"),
      text_result("b.warn", Status::warn, "meh"),
      text_result("c.skip", Status::skip, "nothing to do here"),
      text_result("d.error", Status::error, "could not run"),
      text_result("e.fail", Status::fail, "broken"),
  });
  const std::vector<std::string> lines = lines_of(render_text(report, TextStyle{}));
  const size_t fail = line_index(lines, "FAIL  e.fail");
  const size_t error = line_index(lines, "ERROR d.error");
  const size_t warn = line_index(lines, "WARN  b.warn");
  const size_t pass = line_index(lines, "PASS  a.pass  fine");
  const size_t skip = line_index(lines, "SKIP  1 result (-v lists it with the reasons)");
  ASSERT_NE(fail, std::string::npos);
  ASSERT_NE(error, std::string::npos);
  ASSERT_NE(warn, std::string::npos);
  ASSERT_NE(pass, std::string::npos);
  ASSERT_NE(skip, std::string::npos);
  EXPECT_LT(fail, error);
  EXPECT_LT(error, warn);
  EXPECT_LT(warn, pass);
  EXPECT_LT(pass, skip);
  EXPECT_EQ(lines.back(), "Result: ERROR  1 passed, 1 warning, 1 failed, 1 error, 1 skipped");
}

TEST(TextRenderer, SkipsAreOneCountLineUnlessVerbose) {
  std::vector<CheckResult> results{text_result("a.pass", Status::pass, "fine")};
  for (const char* id : {"b.skip", "c.skip", "d.skip"}) {
    results.push_back(text_result(id, Status::skip, std::string("no reason for ") + id));
  }
  const std::string text = render_text(report_with(results), TextStyle{});
  EXPECT_NE(text.find("\nSkipped (3)\nSKIP  3 results (-v lists each with the reasons)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("no reason for"), std::string::npos) << text;
  TextStyle verbose;
  verbose.verbose = true;
  const std::string full = render_text(report_with(results), verbose);
  for (const char* id : {"b.skip", "c.skip", "d.skip"}) {
    EXPECT_NE(full.find(std::string("no reason for ") + id), std::string::npos) << full;
  }
  EXPECT_EQ(full.find("-v lists"), std::string::npos);
}

TEST(TextRenderer, QuietShowsOnlyProblemsAndTheVerdict) {
  TextStyle quiet;
  quiet.quiet = true;
  const std::vector<std::string> lines =
      lines_of(render_text(report_with({text_result("a.pass", Status::pass, "fine"),
                                        text_result("b.warn", Status::warn, "meh"),
                                        text_result("c.skip", Status::skip, "nothing")}),
                           quiet));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(line_index(lines, "WARN  b.warn"), std::string::npos);
  EXPECT_EQ(line_index(lines, "PASS"), std::string::npos);
  EXPECT_EQ(line_index(lines, "SKIP"), std::string::npos);
  EXPECT_EQ(line_index(lines, "gpucheck "), std::string::npos) << "no header";
  EXPECT_EQ(lines.back(), "Result: WARN  1 passed, 1 warning, 0 failed, 0 errors, 1 skipped");

  const std::string calm =
      render_text(report_with({text_result("a.pass", Status::pass, "fine")}), quiet);
  // No blank line before the first block (issue 36 item 8).
  EXPECT_EQ(calm, "No problems.\n\nResult: PASS  1 passed, 0 warnings, 0 failed, 0 errors, 0 "
                  "skipped\n");
  EXPECT_EQ(lines.front(), "Problems (1)");
}

// Each problem once: a finding printed above as the root cause is one line in the problems.
TEST(TextRenderer, ARootCauseIsPrintedOnceInFull) {
  CheckResult cause = text_result("driver.nvml", Status::fail, "nvmlInit_v2 returned 18");
  cause.findings = {Finding{"driver.version_mismatch", Severity::fail,
                            "module 570.158.01, user "
                            "space 570.172.08",
                            "reboot", std::nullopt, false}};
  Report report = report_with({cause});
  report.root_causes = {RootCause{"driver.version_mismatch",
                                  "driver.nvml",
                                  std::nullopt,
                                  "module 570.158.01, user space 570.172.08",
                                  "reboot",
                                  {}}};
  TextStyle quiet;
  quiet.quiet = true;
  const std::string text = render_text(report, quiet);
  EXPECT_EQ(count_of(text, "module 570.158.01"), 1U) << text;
  EXPECT_NE(text.find("- driver.version_mismatch (fail): the root cause above"), std::string::npos)
      << text;
  // A finding of the same code but another message (another GPU, another version) is in full.
  report.results[0].findings[0].message = "module 535.1, user space 535.2";
  EXPECT_EQ(render_text(report, quiet).find("the root cause above"), std::string::npos);
}

TEST(TextRenderer, WrapsAtTheWidthAsked) {
  const std::string summary(150, 'x');
  const Report report = report_with({text_result("a.warn", Status::warn, "word " + summary)});
  for (const int width : {80, 132, 200}) {
    TextStyle style;
    style.width = width;
    size_t longest = 0;
    for (const std::string& line : lines_of(render_text(report, style))) {
      if (line.find("xxxx") == std::string::npos) {
        longest = std::max(longest, line.size());
      }
    }
    EXPECT_LE(longest, static_cast<size_t>(width)) << width;
  }
  TextStyle wide;
  wide.width = 200;
  EXPECT_NE(render_text(report, wide).find("word " + summary), std::string::npos);
}

TEST(TextRenderer, PassingChecksTakeOneLineAndPerGpuPassesJoin) {
  std::vector<CheckResult> results;
  for (int gpu = 0; gpu < 4; ++gpu) {
    results.push_back(
        text_result("gpu.ecc", Status::pass, "ok on GPU " + std::to_string(gpu), {}, gpu));
  }
  results.push_back(text_result("gpu.pcie", Status::pass, "Gen5 x16", {}, 0));
  const std::string text = render_text(report_with(results), TextStyle{});
  EXPECT_NE(text.find("PASS  gpu.ecc [GPU 0-3]  Title of gpu.ecc\n"), std::string::npos) << text;
  EXPECT_NE(text.find("PASS  gpu.pcie [GPU 0]  Gen5 x16\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("ok on GPU"), std::string::npos);

  TextStyle verbose;
  verbose.verbose = true;
  const std::string full = render_text(report_with(results), verbose);
  for (int gpu = 0; gpu < 4; ++gpu) {
    EXPECT_NE(full.find("ok on GPU " + std::to_string(gpu)), std::string::npos) << full;
  }
}

TEST(TextRenderer, NotesOfPassingChecksShowOnlyInVerboseMode) {
  const Report report = report_with({text_result(
      "gpu.persistence", Status::pass, "persistence off",
      {Finding{"gpu.persistence_off", Severity::info, "persistence mode is off", "", 0}})});
  const std::string brief = render_text(report, TextStyle{});
  EXPECT_NE(brief.find("persistence off (1 note, -v shows)"), std::string::npos) << brief;
  EXPECT_EQ(brief.find("persistence mode is off"), std::string::npos);
  TextStyle verbose;
  verbose.verbose = true;
  EXPECT_NE(render_text(report, verbose)
                .find("- gpu.persistence_off (info): persistence mode "
                      "is off [GPU 0]"),
            std::string::npos);
}

TEST(TextRenderer, MetricsShowTheirUnitsAndNotes) {
  CheckResult r = text_result("gpu.bandwidth", Status::pass, "fast enough", {}, 0);
  r.metrics = {Metric{"h2d_gbps", 55.518, "GB/s", "median of 20"},
               Metric{"d2d_gbps", 4187.6, "GB/s", ""}, Metric{"max_abs_error", 3.1e-05, "", ""}};
  TextStyle verbose;
  verbose.verbose = true;
  const std::string text = render_text(report_with({r}), verbose);
  EXPECT_NE(text.find("      h2d_gbps = 55.5 GB/s (median of 20)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      d2d_gbps = 4188 GB/s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      max_abs_error = 3.1e-05\n"), std::string::npos) << text;
  // Without -v a pass says how many figures it has (issue 36 item 8: 70 lines on 8 GPUs).
  const std::string brief = render_text(report_with({r}), TextStyle{});
  EXPECT_EQ(brief.find("h2d_gbps"), std::string::npos) << brief;
  EXPECT_NE(brief.find("fast enough (3 figures, -v shows)"), std::string::npos) << brief;
}

TEST(TextRenderer, PassesOfOneCheckFoldIntoOneLineWhateverTheirFigures) {
  std::vector<CheckResult> results;
  for (int g = 0; g < 8; ++g) {
    CheckResult r = text_result("gpu.bandwidth", Status::pass, "GPU copies", {}, g);
    r.metrics = {Metric{"h2d_gbps", 55.0 + g, "GB/s", ""}};
    results.push_back(r);
  }
  const std::string brief = render_text(report_with(results), TextStyle{});
  EXPECT_EQ(count_of(brief, "PASS  gpu.bandwidth"), 1U) << brief;
  EXPECT_NE(brief.find("PASS  gpu.bandwidth [GPU 0-7]"), std::string::npos) << brief;
  EXPECT_NE(brief.find("(8 figures, -v shows)"), std::string::npos) << brief;
}

TEST(TextRenderer, HeaderNamesTheStack) {
  const std::string text = flattened(render_text(report_with({}), TextStyle{}));
  for (const char* expected :
       {"gpucheck 0.1.0 replay mode, 2026-11-21T12:00:00Z", "Ubuntu 24.04.3 LTS",
        "kernel 6.8.0-85-generic", "in a docker container", "580.159.04 (open kernel module)",
        "CUDA driver API 13.0", "GPU 0 NVIDIA H200, sm_90, 143771 MiB, PCIe Gen5 x16",
        "CUDA rt 13.0", "cuDNN 9.14.0, built for CUDA 13.0", "also 9.19.0 (pip", "cuBLAS 13.1.0",
        "NCCL 2.28.3", "No checks were run."}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

TEST(TextRenderer, HeaderSaysWhatIsMissing) {
  Report report = report_with({});
  report.snapshot = load_recorded_snapshot("no_driver");
  const std::string text = flattened(render_text(report, TextStyle{}));
  EXPECT_NE(text.find("no NVIDIA kernel module loaded, NVML not loadable, libcuda.so.1 not "
                      "loadable"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPUs none found"), std::string::npos) << text;
  EXPECT_NE(text.find("cuDNN 9.19.0, built for CUDA 13.0"), std::string::npos) << text;
}

TEST(TextRenderer, HeaderShowsCrashedProbesHiddenGpusAndWsl) {
  Report report = report_with({});
  const ChildFailure crash{ChildFailureKind::signal, 11, "SIGSEGV", 0, 0.0,
                           "killed by SIGSEGV",      ""};
  report.snapshot.nvml.failure = crash;
  report.snapshot.cuda.failure = crash;
  report.snapshot.libraries[1].failure = crash;
  report.snapshot.environment.container.kind = "none";
  report.snapshot.environment.wsl = true;
  GpuInfo hidden = report.snapshot.gpus[0];
  hidden.index = 1;
  hidden.cuda_ordinal = std::nullopt;
  hidden.mig_enabled = true;
  hidden.mig_instance_count = 2;
  report.snapshot.gpus.push_back(hidden);
  const std::string text = flattened(render_text(report, TextStyle{}));
  for (const char* expected :
       {"(x86_64); under WSL", "NVML probe failed: killed by SIGSEGV",
        "CUDA probe failed: killed by SIGSEGV", "cuDNN probe failed: killed by SIGSEGV",
        "GPU 1 NVIDIA H200, sm_90, 143771 MiB, PCIe Gen5 x16, MIG on (2 instances), hidden from "
        "CUDA"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
  EXPECT_EQ(text.find("docker"), std::string::npos);
}

TEST(TextRenderer, VerboseShowsKernelModuleFacts) {
  Report report = report_with({});
  KernelModuleInfo& km = report.snapshot.kernel_module;
  km.running_kernel = "6.8.0-90-generic";
  km.module_files = {"/lib/modules/6.8.0-90-generic/updates/dkms/nvidia.ko.zst"};
  km.other_kernels_with_module = {"6.8.0-85-generic"};
  km.secure_boot = true;
  km.lockdown = "integrity";
  km.modprobe_blacklist = {"/etc/modprobe.d/nvidia.conf: blacklist nvidia"};
  km.pci_devices[0].runtime_status = "suspended";
  km.pci_devices[0].power_state = "D3cold";
  TextStyle verbose;
  verbose.verbose = true;
  const std::string text = flattened(render_text(report, verbose));
  for (const char* expected :
       {"running kernel 6.8.0-90-generic: 1 NVIDIA module file, Secure Boot on, lockdown "
        "integrity",
        "NVIDIA module also built for kernel 6.8.0-85-generic",
        "blacklisted in /etc/modprobe.d/nvidia.conf: blacklist nvidia", "power suspended D3cold"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

TEST(TextRenderer, ManyLibraryCopiesAreCutShortWithoutVerbose) {
  Report report = report_with({});
  LibraryFamily& cudnn = report.snapshot.libraries[1];
  for (int i = 0; i < 5; ++i) {
    LibraryCopy copy;
    copy.path = "/opt/env" + std::to_string(i) + "/lib/libcudnn.so.9";
    copy.origin = "conda";
    copy.version = "9.1." + std::to_string(i);
    cudnn.copies.push_back(copy);
  }
  const std::string brief = render_text(report, TextStyle{});
  EXPECT_NE(brief.find("also 9.1.1 (conda): /opt/env1/lib/libcudnn.so.9"), std::string::npos)
      << brief;
  EXPECT_EQ(brief.find("/opt/env2/"), std::string::npos) << brief;
  EXPECT_NE(brief.find("and 3 more copies (-v lists them)"), std::string::npos) << brief;
  TextStyle verbose;
  verbose.verbose = true;
  const std::string full = render_text(report, verbose);
  EXPECT_NE(full.find("/opt/env4/lib/libcudnn.so.9"), std::string::npos);
  EXPECT_EQ(full.find("more copies"), std::string::npos);
}

TEST(TextRenderer, NarrowWidthBelowFortyFallsBackToEighty) {
  TextStyle narrow;
  narrow.width = 10;
  const Report report = golden_scenarios().front().report;
  EXPECT_EQ(render_text(report, narrow), render_text(report, TextStyle{}));
}

} // namespace
} // namespace gpucheck::render
