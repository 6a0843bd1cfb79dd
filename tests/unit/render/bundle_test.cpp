// The support bundle: every member present, redacted together, readable by tar.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "probes/bundle_commands.hpp"
#include "render/bundle.hpp"
#include "support/external_tool.hpp"
#include "support/fixture_tree.hpp"
#include "support/text_and_processes.hpp"
#include "unit/planted_identifiers.hpp"

namespace gpucheck::testing {
namespace {

using namespace std::chrono_literals;
using probes::BundleCommand;

const std::vector<std::string> k_members = {
    "gpucheck-bundle/README.txt",
    "gpucheck-bundle/report.txt",
    "gpucheck-bundle/report.json",
    "gpucheck-bundle/report.md",
    "gpucheck-bundle/report.junit.xml",
    "gpucheck-bundle/report.prom",
    "gpucheck-bundle/report.github.txt",
    "gpucheck-bundle/snapshot.json",
    "gpucheck-bundle/sources/dmesg-nvidia.txt",
    "gpucheck-bundle/sources/proc-driver-nvidia-version.txt"};

std::map<std::string, std::string> planted_sources(const PlantedIdentifiers& p) {
  return {{"proc-driver-nvidia-version.txt",
           "NVRM version: NVIDIA UNIX Open Kernel Module  580.159.04  (root@" + p.host + ")\n"},
          {"dmesg-nvidia.txt", "[ 12.0] NVRM: GPU at PCI:0000:1b:00: GPU-" + p.uuid0 +
                                   "\n[ 13.0] NVRM: Xid (PCI:0000:3b:00): 79, serial " + p.serial1 +
                                   " on " + p.ipv4 + " " + p.mac + "\n"}};
}

TEST(Bundle, HasEveryFormatTheSnapshotAndTheSources) {
  const PlantedIdentifiers planted = plant_identifiers();
  std::vector<std::string> names;
  for (const render::ArchiveMember& member :
       render::bundle_members(planted_report(planted), planted_sources(planted), {})) {
    names.push_back(member.name);
    EXPECT_FALSE(member.data.empty()) << member.name;
  }
  EXPECT_EQ(names, k_members);
}

TEST(Bundle, TarExtractsItAndNoPlantedIdentifierSurvives) {
  ASSERT_TRUE(tool_on_path("tar"));
  const PlantedIdentifiers planted = plant_identifiers();
  SCOPED_TRACE(fmt::format("seed {}", planted.seed));
  render::BundleOptions options;
  options.hints.user_names = {planted.hint_user};
  options.mtime_s = 1700000000;
  FixtureTree dir;
  dir.file("/b.tar.gz",
           render::make_bundle(planted_report(planted), planted_sources(planted), options));
  dir.dir("/out");
  const ToolResult extract =
      run_tool({"tar", "-xzf", dir.host("/b.tar.gz"), "-C", dir.host("/out")});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  for (const std::string& name : k_members) {
    const std::string text = read_file(dir.host("/out/" + name));
    EXPECT_FALSE(text.empty()) << name;
    for (const std::string& value : planted.all()) {
      EXPECT_EQ(text.find(value), std::string::npos) << value << " survives in " << name;
    }
  }
  // One redactor for the whole bundle: GPU 0's UUID has one placeholder everywhere.
  const std::string dmesg = read_file(dir.host("/out/gpucheck-bundle/sources/dmesg-nvidia.txt"));
  EXPECT_NE(dmesg.find("NVRM: GPU at PCI:0000:1b:00: GPU-0\n"), std::string::npos) << dmesg;
  EXPECT_NE(dmesg.find("serial serial-1 on ipv4-0 mac-0"), std::string::npos) << dmesg;
  const std::string snapshot = read_file(dir.host("/out/gpucheck-bundle/snapshot.json"));
  EXPECT_NE(snapshot.find("\"uuid\": \"GPU-0\""), std::string::npos);
}

TEST(Bundle, NoRedactKeepsTheIdentifiersAndSaysSo) {
  const PlantedIdentifiers planted = plant_identifiers();
  render::BundleOptions options;
  options.redact = false;
  const std::vector<render::ArchiveMember> members =
      render::bundle_members(planted_report(planted), planted_sources(planted), options);
  EXPECT_NE(members[0].data.find("Not redacted"), std::string::npos);
  EXPECT_NE(members[2].data.find(planted.uuid0), std::string::npos);
  EXPECT_NE(members.back().data.find(planted.host), std::string::npos);
}

TEST(Bundle, TheGzipHoldsExactlyTheTarOfTheMembers) {
  ASSERT_TRUE(tool_on_path("gzip"));
  const PlantedIdentifiers planted = plant_identifiers();
  render::BundleOptions options;
  options.mtime_s = 1700000000;
  const Report report = planted_report(planted);
  const std::map<std::string, std::string> sources = planted_sources(planted);
  FixtureTree dir;
  dir.file("/b.tar.gz", render::make_bundle(report, sources, options));
  const ToolResult tar = run_tool({"gzip", "-dc", dir.host("/b.tar.gz")});
  ASSERT_EQ(tar.exit_code, 0) << tar.output;
  EXPECT_TRUE(tar.output ==
              render::make_tar(render::bundle_members(report, sources, options), options.mtime_s));
}

/// `nvidia-smi -q` of two H200s as the driver prints it (shortened), with the planted GPUs'
/// UUIDs and serials, a MIG device and the platform's own serial and GUID.
std::string recorded_nvidia_smi(const PlantedIdentifiers& p, const std::string& chassis_serial,
                                const std::string& fabric_guid) {
  std::string text = "\n==============NVSMI LOG==============\n\n"
                     "Timestamp                                 : Thu Nov 26 12:00:00 2026\n"
                     "Driver Version                            : 580.159.04\n"
                     "CUDA Version                              : 13.0\n\n"
                     "Attached GPUs                             : 2\n";
  const std::array<std::string, 2> bus = {"00000000:1B:00.0", "00000000:3B:00.0"};
  for (int i = 0; i < 2; ++i) {
    text += fmt::format("GPU {}\n"
                        "    Product Name                          : NVIDIA H200\n"
                        "    Product Brand                         : NVIDIA\n"
                        "    Persistence Mode                      : Enabled\n"
                        "    Serial Number                         : {}\n"
                        "    GPU UUID                              : GPU-{}\n"
                        "    GPU PDI                               : 0x{}{:02x}\n"
                        "    Minor Number                          : {}\n"
                        "    VBIOS Version                         : 96.00.AF.00.01\n"
                        "    Board ID                              : 0x{}00\n"
                        "    Board Part Number                     : 692-2G520-0280-000\n"
                        "    GPU Part Number                       : 2335-885-A1\n"
                        "    Platform Info\n"
                        "        Chassis Serial Number             : {}\n"
                        "        Slot Number                       : {}\n"
                        "        GPU Fabric GUID                   : {}\n"
                        "    MIG Devices\n"
                        "        MIG Device UUID                   : MIG-{}\n"
                        "    PCI\n"
                        "        Bus                               : 0x{}\n"
                        "        Bus Id                            : {}\n"
                        "    Fan Speed                             : N/A\n"
                        "    Performance State                     : P0\n",
                        bus[i], i == 0 ? p.serial0 : p.serial1, i == 0 ? p.uuid0 : p.uuid1,
                        p.uuid0.substr(0, 8) + p.uuid1.substr(0, 6), i, i, bus[i].substr(9, 2),
                        chassis_serial, i, fabric_guid, p.mig_uuid, bus[i].substr(9, 2), bus[i]);
  }
  return text;
}

/// `lspci -vvv` of a GPU and a ConnectX NIC as root sees them (shortened): the NIC's PCIe
/// Device Serial Number and its VPD serial.
std::string recorded_lspci(const std::string& dsn, const std::string& vpd_serial) {
  return "1b:00.0 3D controller: NVIDIA Corporation GH100 [H200 SXM 141GB] (rev a1)\n"
         "\tSubsystem: NVIDIA Corporation Device 1796\n"
         "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping-\n"
         "\tLnkSta:\tSpeed 32GT/s, Width x16\n"
         "\tKernel driver in use: nvidia\n\n"
         "5e:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
         "\tSubsystem: Mellanox Technologies Device 0026\n"
         "\tCapabilities: [48] Vital Product Data\n"
         "\t\tProduct Name: NVIDIA ConnectX-7 HHHL adapter card\n"
         "\t\tRead-only fields:\n"
         "\t\t\t[PN] Part number: MCX755106AS-HEAT\n"
         "\t\t\t[SN] Serial number: " +
         vpd_serial +
         "\n"
         "\t\t\t[V3] Vendor specific: 5ae6b4a1c9c6ed118000a088c2e5a4c8\n"
         "\tCapabilities: [1c0 v1] Device Serial Number " +
         dsn +
         "\n"
         "\tKernel driver in use: mlx5_core\n";
}

BundleCommand fake(const FixtureTree& tools, const std::string& file_name,
                   const std::string& script, std::chrono::milliseconds deadline = 10000ms) {
  return BundleCommand{file_name, {tools.host(script)}, {}, deadline};
}

std::map<std::string, std::string> extract_bundle(const std::string& bundle, FixtureTree& dir) {
  dir.file("/b.tar.gz", bundle);
  dir.dir("/out");
  const ToolResult extract =
      run_tool({"tar", "-xzf", dir.host("/b.tar.gz"), "-C", dir.host("/out")});
  EXPECT_EQ(extract.exit_code, 0) << extract.output;
  std::map<std::string, std::string> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(dir.host("/out/gpucheck-bundle"))) {
    if (entry.is_regular_file()) {
      files[std::filesystem::relative(entry.path(), dir.host("/out/gpucheck-bundle"))] =
          read_file(entry.path());
    }
  }
  return files;
}

// Nvidia-smi -q and lspci -vvv in the bundle, redacted with the report's
// placeholders; the serials only they name (the chassis', a NIC's) are replaced too.
TEST(Bundle, NvidiaSmiAndLspciOutputIsRedactedLikeTheRest) {
  ASSERT_TRUE(tool_on_path("tar"));
  const PlantedIdentifiers planted = plant_identifiers();
  SCOPED_TRACE(fmt::format("seed {}", planted.seed));
  const std::string chassis = fmt::format("1821{}", planted.serial0.substr(5));
  const std::string guid = "0x" + planted.uuid1.substr(0, 8) + planted.uuid0.substr(0, 8);
  const std::string dsn = planted.mac.substr(0, 8) + "-ff-ff-" + planted.mac.substr(9);
  std::string dsn_dashed = dsn;
  std::replace(dsn_dashed.begin(), dsn_dashed.end(), ':', '-');
  const std::string vpd_serial = "MT" + planted.serial1.substr(3) + "X";
  FixtureTree tools;
  tools.file("/data/smi.txt", recorded_nvidia_smi(planted, chassis, guid));
  tools.file("/data/lspci.txt", recorded_lspci(dsn_dashed, vpd_serial));
  tools.file("/sbin/nvidia-smi", "#!/bin/sh\ncat '" + tools.host("/data/smi.txt") + "'\n", 0755);
  tools.file("/sbin/lspci", "#!/bin/sh\ncat '" + tools.host("/data/lspci.txt") + "'\n", 0755);
  std::map<std::string, std::string> sources = planted_sources(planted);
  sources.merge(
      probes::collect_command_outputs({fake(tools, "nvidia-smi-q.txt", "/sbin/nvidia-smi"),
                                       fake(tools, "lspci-vvv.txt", "/sbin/lspci")}));
  ASSERT_EQ(sources.at("nvidia-smi-q.txt"), recorded_nvidia_smi(planted, chassis, guid));
  render::BundleOptions options;
  options.hints.user_names = {planted.hint_user};
  FixtureTree dir;
  const std::map<std::string, std::string> files =
      extract_bundle(render::make_bundle(planted_report(planted), sources, options), dir);
  std::vector<std::string> secrets = planted.all();
  secrets.insert(secrets.end(), {chassis, guid, dsn_dashed, vpd_serial,
                                 "0x" + planted.uuid0.substr(0, 8) + planted.uuid1.substr(0, 6)});
  for (const auto& [name, text] : files) {
    for (const std::string& value : secrets) {
      EXPECT_EQ(text.find(value), std::string::npos) << value << " survives in " << name;
    }
  }
  const std::string& smi = files.at("sources/nvidia-smi-q.txt");
  // The report's placeholders: GPU 0 is GPU-0 with serial-0 here as in report.json.
  for (const char* line : {"    Serial Number                         : serial-0\n"
                           "    GPU UUID                              : GPU-0\n",
                           "    Serial Number                         : serial-1\n"
                           "    GPU UUID                              : GPU-1\n",
                           "        Chassis Serial Number             : serial-4\n",
                           "        GPU Fabric GUID                   : guid-1\n",
                           "    GPU PDI                               : guid-0\n",
                           "        MIG Device UUID                   : MIG-0\n",
                           "        Bus Id                            : 00000000:3B:00.0\n"}) {
    EXPECT_NE(smi.find(line), std::string::npos) << line << " not in\n" << smi;
  }
  EXPECT_NE(files.at("report.json").find("\"serial\": \"serial-0\""), std::string::npos);
  const std::string& lspci = files.at("sources/lspci-vvv.txt");
  // After the GPUs' serials, in the order the sources are read (lspci-vvv.txt first).
  EXPECT_NE(lspci.find("Device Serial Number serial-3\n"), std::string::npos) << lspci;
  EXPECT_NE(lspci.find("[SN] Serial number: serial-2\n"), std::string::npos) << lspci;
  EXPECT_NE(lspci.find("GH100 [H200 SXM 141GB]"), std::string::npos) << lspci;
  EXPECT_NE(files.at("README.txt").find("sources/nvidia-smi-q.txt  the output of nvidia-smi -q"),
            std::string::npos);
}

// A program that hangs, one that floods and one that is missing: each file says why, and the
// bundle is complete.
TEST(Bundle, AHangingFloodingOrMissingProgramIsANoteInACompleteBundle) {
  ASSERT_TRUE(tool_on_path("tar"));
  const PlantedIdentifiers planted = plant_identifiers();
  FixtureTree tools;
  tools.file("/bin/hangs", "#!/bin/sh\nsleep 60\n", 0755);
  tools.file("/bin/floods", "#!/bin/sh\nexec yes 'GPU UUID : GPU-" + planted.uuid0 + "'\n", 0755);
  BundleCommand floods = fake(tools, "lspci-vvv.txt", "/bin/floods");
  floods.max_bytes = 1 << 20;
  std::map<std::string, std::string> sources = planted_sources(planted);
  sources.merge(
      probes::collect_command_outputs({fake(tools, "nvidia-smi-q.txt", "/bin/hangs", 200ms), floods,
                                       fake(tools, "missing.txt", "/bin/missing")}));
  FixtureTree dir;
  const std::map<std::string, std::string> files =
      extract_bundle(render::make_bundle(planted_report(planted), sources, {}), dir);
  for (const std::string& member : k_members) {
    EXPECT_TRUE(files.contains(member.substr(std::string("gpucheck-bundle/").size()))) << member;
  }
  EXPECT_NE(files.at("sources/nvidia-smi-q.txt").find("did not finish within 0.2 s"),
            std::string::npos);
  const std::string& flood = files.at("sources/lspci-vvv.txt");
  EXPECT_NE(flood.find("printed more than 1 MiB and was stopped"), std::string::npos);
  EXPECT_NE(flood.find("GPU UUID : GPU-0\n"), std::string::npos);
  EXPECT_EQ(flood.find(planted.uuid0), std::string::npos);
  EXPECT_NE(files.at("sources/missing.txt").find("was not run: no executable at"),
            std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
