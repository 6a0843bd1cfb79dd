// The kernel-log probe (src/probes/kernel_log.cpp) and driver.kernel_log's judgement over it.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "checks/rules/xid_catalog.hpp"
#include "gpucheck/model/json_io.hpp"
#include "probes/kernel_log.hpp"
#include "render/json.hpp"
#include "support/fixture_tree.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

using probes::parse_kernel_message;

TEST(KernelLogParse, XidWithAndWithoutFunction) {
  const auto event = parse_kernel_message(
      "NVRM: Xid (PCI:0000:3B:00): 79, pid=1234, name=python3, GPU has fallen off the bus.", 12.5);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->kind, "xid");
  EXPECT_EQ(event->code, 79);
  EXPECT_EQ(event->pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(event->seconds, 12.5);
  const auto old_form = parse_kernel_message("NVRM: Xid (0000:02:00): 13, Graphics SM Warp "
                                             "Exception on (GPC 0, TPC 1)",
                                             1.0);
  ASSERT_TRUE(old_form.has_value());
  EXPECT_EQ(old_form->code, 13);
  EXPECT_EQ(old_form->pci_bus_id, "0000:02:00.0");
}

TEST(KernelLogParse, SxidFallenOffTheBusAndAer) {
  const auto sxid = parse_kernel_message(
      "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up", 3.0);
  ASSERT_TRUE(sxid.has_value());
  EXPECT_EQ(sxid->kind, "sxid");
  EXPECT_EQ(sxid->code, 20034);
  EXPECT_EQ(sxid->severity, "fatal");
  const auto non_fatal = parse_kernel_message(
      "nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 12028, Non-fatal, Link 32 egress", 3.0);
  ASSERT_TRUE(non_fatal.has_value());
  EXPECT_EQ(non_fatal->severity, "non-fatal");

  const auto fallen = parse_kernel_message(
      "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:1db4) installed in this system has fallen "
      "off the bus and is not responding to commands.",
      4.0);
  ASSERT_TRUE(fallen.has_value());
  EXPECT_EQ(fallen->kind, "fallen_off_bus");
  EXPECT_EQ(fallen->pci_bus_id, "0000:b3:00.0");

  const auto received = parse_kernel_message(
      "pcieport 0000:00:01.0: AER: Uncorrected (Non-Fatal) error received: 0000:3b:00.0", 5.0);
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(received->kind, "aer");
  EXPECT_EQ(received->pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(received->severity, "uncorrected");
  const auto bus_error = parse_kernel_message(
      "nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
      "(Receiver ID)",
      6.0);
  ASSERT_TRUE(bus_error.has_value());
  EXPECT_EQ(bus_error->pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(bus_error->severity, "corrected");
  const auto fatal = parse_kernel_message(
      "nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
      "Layer, (Requester ID)",
      6.0);
  ASSERT_TRUE(fatal.has_value());
  EXPECT_EQ(fatal->severity, "fatal");
}

// The root port's and the device's AER lines as kernels print them before and after the 2025 AER
// logging rework ("error received:" with Uncorrected/Corrected, then "error message received
// from" with the specification's Uncorrectable/Correctable); severity and device read alike.
TEST(KernelLogParse, AerLinesOfEveryKernelFormat) {
  struct Line {
    const char* text;
    const char* device;
    const char* severity;
  };
  for (const Line& line : std::initializer_list<Line>{
           // before the rework (drivers/pci/pcie/aer.c, aer_print_port_info)
           {"pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:3b:00.0",
            "0000:3b:00.0", "fatal"},
           {"pcieport 0000:00:01.0: AER: Multiple Corrected error received: 0000:3b:00.0",
            "0000:3b:00.0", "corrected"},
           // after it: the line of issue 35 and one seen on a laptop's Bluetooth function
           {"pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error message received from "
            "0000:3b:00.0",
            "0000:3b:00.0", "fatal"},
           {"pcieport 0000:00:1c.0: AER: Multiple Uncorrectable (Non-Fatal) error message "
            "received from 0000:73:00.1",
            "0000:73:00.1", "uncorrected"},
           {"pcieport 0000:00:01.0: AER: Uncorrectable (Fatal) error message received from "
            "0000:3b:00.0",
            "0000:3b:00.0", "fatal"},
           {"pcieport 0000:00:01.0: AER: Correctable error message received from 0000:3b:00.0",
            "0000:3b:00.0", "corrected"},
           // the device's own line, both vocabularies
           {"nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Correctable, type=Physical "
            "Layer, (Receiver ID)",
            "0000:3b:00.0", "corrected"},
           {"nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), "
            "type=Transaction Layer, (Requester ID)",
            "0000:3b:00.0", "uncorrected"}}) {
    SCOPED_TRACE(line.text);
    const auto event = parse_kernel_message(line.text, 1.0);
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->kind, "aer");
    EXPECT_EQ(event->pci_bus_id, line.device);
    EXPECT_EQ(event->severity, line.severity);
  }
}

TEST(KernelLogParse, OtherLinesAndGarbageGiveNothing) {
  for (const char* line :
       {"", "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05",
        "nvidia 0000:3b:00.0: AER:   [ 0] RxErr", "NVRM: Xid (PCI:", "NVRM: Xid (PCI:0000:3b:00): ",
        "NVRM: Xid (PCI:zzzz): 79", "AER: error received:", "\xff\xfe NVRM: Xid ((((("}) {
    SCOPED_TRACE(line);
    const auto event = parse_kernel_message(line, 0.0);
    if (event) {
      // Whatever comes out of garbage is bounded and typed.
      EXPECT_LE(event->text.size(), 300U);
    }
  }
  EXPECT_FALSE(parse_kernel_message("NVRM: loading NVIDIA UNIX Open Kernel Module", 0).has_value());
  EXPECT_FALSE(parse_kernel_message("nvidia 0000:3b:00.0: AER:   [ 0] RxErr", 0).has_value());
  EXPECT_FALSE(parse_kernel_message("NVRM: Xid (PCI:0000:3b:00): ", 0).has_value());
  const std::string long_line = "NVRM: Xid (PCI:0000:3b:00): 31, " + std::string(5000, 'x');
  EXPECT_EQ(parse_kernel_message(long_line, 0)->text.size(), 300U);
}

TEST(KernelLogRead, FixtureKmsgFileKeepsNvidiaEventsAndTheGpusAer) {
  FixtureTree tree;
  tree.file("/proc/uptime", "7200.50 14000.00\n");
  tree.file("/dev/kmsg",
            "6,1,0,-;Linux version 6.8.0-45-generic\n"
            "4,2,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
            " SUBSYSTEM=pci\n"
            " DEVICE=+pci:0000:3b:00.0\n"
            "3,3,6000000,-;pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0\n"
            "3,4,6000001,-;igb 0000:05:00.0: AER: PCIe Bus Error: severity=Corrected\n"
            "4,5,7000000,-;NVRM: Xid (PCI:0000:5b:00): 13, Graphics Exception");
  const KernelLogInfo log =
      probes::read_kernel_log(probes::Sysroot(tree.root()), {"0000:3b:00.0", "0000:5b:00.0"});
  EXPECT_TRUE(log.readable);
  EXPECT_EQ(log.source, "kmsg");
  EXPECT_EQ(log.records_read, 5);
  ASSERT_EQ(log.uptime_s, 7200.5);
  ASSERT_EQ(log.events.size(), 3U); // the NIC's AER line is not a GPU's
  EXPECT_EQ(log.events[0].code, 79);
  EXPECT_DOUBLE_EQ(log.events[0].seconds, 5.0);
  EXPECT_EQ(log.events[1].kind, "aer");
  EXPECT_EQ(log.events[2].code, 13); // the last record has no newline
}

// Found by the fuzzing campaign (fuzz_sysroot, 2026-11-26): a timestamp or an uptime too large
// for a snapshot (1e400 is infinite) was kept, and the snapshot gpucheck wrote did not read back.
TEST(KernelLogRead, AbsurdTimesAreUnknownSoTheSnapshotReadsBack) {
  FixtureTree tree;
  tree.file("/proc/uptime", "1e400 5\n");
  tree.file("/dev/kmsg", "4,1,99999999999999999999999,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1\n"
                         "4,2,-5000000,-;NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception\n"
                         "4,3,nan,-;NVRM: Xid (PCI:0000:3b:00): 31, fault\n");
  SystemSnapshot snapshot;
  snapshot.kernel_log = probes::read_kernel_log(probes::Sysroot(tree.root()), {});
  EXPECT_FALSE(snapshot.kernel_log.uptime_s.has_value());
  ASSERT_EQ(snapshot.kernel_log.events.size(), 3U);
  for (const KernelLogEvent& event : snapshot.kernel_log.events) {
    EXPECT_EQ(event.seconds, 0.0) << event.text;
  }
  probes::KernelLogParser parser({});
  parser.add_journal_line("Nov 26 20:16:00 host kernel: [1e300] NVRM: Xid (PCI:0000:3b:00): 79");
  parser.add_journal_line("Nov 26 20:16:00 host kernel: [12.5] NVRM: Xid (PCI:0000:3b:00): 48");
  const KernelLogInfo journal = parser.take({});
  ASSERT_EQ(journal.events.size(), 2U);
  EXPECT_EQ(journal.events[0].seconds, 0.0);
  EXPECT_EQ(journal.events[1].seconds, 12.5);
  snapshot.kernel_log.events.insert(snapshot.kernel_log.events.end(), journal.events.begin(),
                                    journal.events.end());
  const Expected<SystemSnapshot> reread =
      snapshot_from_text(render::render_snapshot_json(snapshot));
  ASSERT_TRUE(reread) << reread.error().message;
  EXPECT_EQ(reread->kernel_log.events.size(), 5U);
}

TEST(KernelLogRead, UnreadableLogSaysWhy) {
  FixtureTree tree;
  tree.file("/proc/sys/kernel/dmesg_restrict", "1\n");
  const KernelLogInfo missing = probes::read_kernel_log(probes::Sysroot(tree.root()), {});
  EXPECT_FALSE(missing.readable);
  EXPECT_NE(missing.unreadable_reason.find("/dev/kmsg"), std::string::npos);
  tree.dir("/dev/kmsg"); // open succeeds, read fails
  const KernelLogInfo directory = probes::read_kernel_log(probes::Sysroot(tree.root()), {});
  EXPECT_FALSE(directory.readable);
  EXPECT_FALSE(directory.unreadable_reason.empty());
}

TEST(KernelLogRead, EventsAreCappedKeepingTheNewest) {
  FixtureTree tree;
  std::string text;
  for (size_t i = 0; i < probes::k_kernel_log_max_events + 20; ++i) {
    text += fmt::format("4,{},{},-;NVRM: Xid (PCI:0000:3b:00): 31, fault {}\n", i, i * 1000000, i);
  }
  tree.file("/dev/kmsg", text);
  const KernelLogInfo log = probes::read_kernel_log(probes::Sysroot(tree.root()), {});
  ASSERT_EQ(log.events.size(), probes::k_kernel_log_max_events);
  EXPECT_DOUBLE_EQ(log.events.back().seconds,
                   static_cast<double>(probes::k_kernel_log_max_events + 19));
}

TEST(XidCatalog, SortedAndCoversTheNumbersPeopleMeet) {
  const auto catalog = checks::xid_catalog();
  for (size_t i = 1; i < catalog.size(); ++i) {
    EXPECT_LT(catalog[i - 1].xid, catalog[i].xid);
  }
  for (int xid : {13, 31, 43,  45,  48,  61,  62,  63,  64,  68,  69,  74,  79,  92,
                  94, 95, 109, 119, 120, 140, 143, 144, 145, 146, 147, 148, 149, 150}) {
    const checks::XidInfo* info = checks::find_xid(xid);
    ASSERT_NE(info, nullptr) << xid;
    EXPECT_FALSE(info->meaning.empty());
    EXPECT_FALSE(info->action.empty());
  }
  EXPECT_EQ(checks::find_xid(79)->weight, checks::XidClass::fatal);
  EXPECT_EQ(checks::find_xid(13)->weight, checks::XidClass::application);
  EXPECT_EQ(checks::find_xid(94)->weight, checks::XidClass::hardware);
  EXPECT_EQ(checks::find_xid(999), nullptr);
}

KernelLogEvent event(std::string kind, std::optional<int> code, std::string bdf, double seconds,
                     std::string severity = "") {
  KernelLogEvent e;
  e.kind = std::move(kind);
  e.code = code;
  e.pci_bus_id = std::move(bdf);
  e.seconds = seconds;
  e.severity = std::move(severity);
  e.text = "a kernel line";
  return e;
}

SystemSnapshot with_log() {
  SystemSnapshot s = healthy_h200();
  s.kernel_log.source = "kmsg";
  s.kernel_log.readable = true;
  s.kernel_log.uptime_s = 3600.0;
  s.kernel_log.records_read = 1000;
  return s;
}

TEST(DriverKernelLogCheck, Table) {
  auto add = [](KernelLogEvent e) {
    return [e](SystemSnapshot& s) { s.kernel_log.events.push_back(e); };
  };
  const CheckCase cases[] = {
      {"a clean log", nullptr, Status::pass, {}},
      {"Xid 79 an hour into boot",
       add(event("xid", 79, "0000:1b:00.0", 60.0)),
       Status::fail,
       {"log.xid_fatal"}},
      {"Xid 13 is the application's",
       add(event("xid", 13, "0000:1b:00.0", 60.0)),
       Status::pass,
       {"log.xid_application"}},
      {"Xid 94 wants a reset when convenient",
       add(event("xid", 94, "0000:1b:00.0", 60.0)),
       Status::warn,
       {"log.xid_hardware"}},
      {"an Xid nobody lists is a note",
       add(event("xid", 250, "0000:1b:00.0", 60.0)),
       Status::pass,
       {"log.xid_unlisted"}},
      {"fatal SXid",
       add(event("sxid", 20034, "0000:05:00.0", 60.0, "fatal")),
       Status::warn,
       {"log.sxid"}},
      {"corrected AER",
       add(event("aer", std::nullopt, "0000:1b:00.0", 60.0, "corrected")),
       Status::pass,
       {"log.pcie_aer_corrected"}},
      {"fatal AER",
       add(event("aer", std::nullopt, "0000:1b:00.0", 60.0, "fatal")),
       Status::fail,
       {"log.pcie_aer_fatal"}},
      {"fallen off the bus without its Xid",
       add(event("fallen_off_bus", std::nullopt, "0000:1b:00.0", 60.0)),
       Status::fail,
       {"log.fallen_off_bus"}},
      {"unreadable: skip",
       [](SystemSnapshot& s) {
         s.kernel_log.readable = false;
         s.kernel_log.unreadable_reason =
             "/dev/kmsg: Operation not permitted (kernel.dmesg_restrict = 1)";
       },
       Status::skip,
       {}},
  };
  run_cases(checks::driver_kernel_log_check(), with_log(), cases);
}

TEST(DriverKernelLogCheck, AttributesCountsAndAges) {
  SystemSnapshot s = with_log();
  s.kernel_log.uptime_s = 3.0 * 86400.0;
  // Two Xid 48 on GPU 0 long ago (a day and more): a warning, not a failure.
  s.kernel_log.events.push_back(event("xid", 48, "0000:1b:00.0", 100.0));
  s.kernel_log.events.push_back(event("xid", 48, "0000:1b:00.0", 200.0));
  const CheckResult result = run_check(checks::driver_kernel_log_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  const Finding& f = result.findings[0];
  EXPECT_EQ(f.code, "log.xid_fatal");
  EXPECT_EQ(f.severity, Severity::warn);
  EXPECT_EQ(f.gpu_index, 0);
  EXPECT_NE(f.message.find("GPU 0 (0000:1b:00.0)"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("2 times since boot, last 3.0 days ago"), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("ROBUST_CHANNEL_GPU_ECC_DBE"), std::string::npos);
  EXPECT_NE(f.remedy.find("https://docs.nvidia.com/deploy/xid-errors/"), std::string::npos);
  EXPECT_NE(f.remedy.find("RMA"), std::string::npos);
}

TEST(DriverKernelLogCheck, UnreadableLogNamesTheReasonAndTheWayOut) {
  SystemSnapshot s = with_log();
  s.kernel_log.readable = false;
  s.kernel_log.unreadable_reason = "/dev/kmsg: Operation not permitted (kernel.dmesg_restrict = 1)";
  const CheckResult result = run_check(checks::driver_kernel_log_check(), s).front();
  EXPECT_EQ(result.status, Status::skip);
  EXPECT_NE(result.summary.find("dmesg_restrict = 1"), std::string::npos);
  EXPECT_NE(result.summary.find("sysctl kernel.dmesg_restrict=0"), std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
