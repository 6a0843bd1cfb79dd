// The support bundle: every member present, redacted together, readable by tar.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "render/bundle.hpp"
#include "support/external_tool.hpp"
#include "support/fixture_tree.hpp"
#include "unit/planted_identifiers.hpp"

namespace gpucheck::testing {
namespace {

const std::vector<std::string> k_members = {
    "gpucheck-bundle/README.txt",
    "gpucheck-bundle/report.txt",
    "gpucheck-bundle/report.json",
    "gpucheck-bundle/report.md",
    "gpucheck-bundle/report.junit.xml",
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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
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

} // namespace
} // namespace gpucheck::testing
