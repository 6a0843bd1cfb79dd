// Redaction: every kind of identifier planted in a report (fresh random values each run) is gone
// from every redacted format, placeholders are stable, and what is not an identifier survives.
#include <gtest/gtest.h>

#include <random>

#include "cli/outputs.hpp"
#include "probes/redaction_hints.hpp"
#include "render/json.hpp"
#include "render/junit.hpp"
#include "render/markdown.hpp"
#include "render/redact.hpp"
#include "render/text.hpp"
#include "unit/planted_identifiers.hpp"

namespace gpucheck::testing {
namespace {

using render::Redactor;

std::vector<std::pair<std::string, std::string>> all_formats(const Report& report) {
  render::TextStyle verbose;
  verbose.verbose = true;
  return {{"text", render::render_text(report, render::TextStyle{})},
          {"verbose text", render::render_text(report, verbose)},
          {"json", render::render_json(report)},
          {"markdown", render::render_markdown(report)},
          {"junit", render::render_junit(report)}};
}

bool contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

TEST(Redact, NoPlantedIdentifierSurvivesInAnyFormat) {
  const PlantedIdentifiers planted = plant_identifiers();
  SCOPED_TRACE(fmt::format("seed {}", planted.seed));
  const Report report = planted_report(planted);
  // The planted values are really there before redaction (else this test proves nothing).
  for (const auto& [format, text] : all_formats(report)) {
    if (format == "json") {
      for (const std::string& value : planted.all()) {
        EXPECT_TRUE(contains(text, value)) << value << " not planted in the JSON";
      }
    }
  }
  RedactionHints hints;
  hints.user_names = {planted.hint_user};
  Redactor redactor(hints);
  const Report redacted = redactor.redact(report);
  for (const auto& [format, text] : all_formats(redacted)) {
    for (const std::string& value : planted.all()) {
      EXPECT_FALSE(contains(text, value)) << value << " survives in " << format << ":\n" << text;
    }
  }
}

TEST(Redact, StructuredFieldsGetStablePlaceholdersInIndexOrder) {
  const PlantedIdentifiers planted = plant_identifiers();
  SCOPED_TRACE(fmt::format("seed {}", planted.seed));
  Redactor redactor;
  const Report redacted = redactor.redact(planted_report(planted));
  const SystemSnapshot& s = redacted.snapshot;
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.gpus[0].uuid, "GPU-0");
  EXPECT_EQ(s.gpus[1].uuid, "GPU-1");
  EXPECT_EQ(s.cuda.devices[1].uuid, "GPU-1");
  EXPECT_EQ(s.gpus[0].serial, "serial-0");
  EXPECT_EQ(s.gpus[1].serial, "serial-1");
  EXPECT_EQ(s.host.hostname, "host-0");
  // The same identifier in free text gets the same placeholder as in its field.
  const CheckResult& ecc = redacted.results[0];
  EXPECT_EQ(ecc.summary, "GPU-1 (serial serial-1) has uncorrected ECC errors");
  EXPECT_TRUE(contains(ecc.findings[0].message, "on GPU-1, MIG-0; reported to ipv4-0"))
      << ecc.findings[0].message;
  EXPECT_EQ(ecc.findings[0].remedy, "drain the node host-0 and replace board serial-1");
  EXPECT_EQ(s.environment.variables.at("LD_LIBRARY_PATH"),
            "/home/user-0/miniconda3/lib:/usr/local/cuda/lib64");
  EXPECT_EQ(s.libraries[0].copies[0].real_path, "/Users/user-1/venv/lib/libcudnn.so.9.19.0");
  EXPECT_EQ(redacted.context.argv[1], "/home/user-0/snapshots/today.json");
  EXPECT_EQ(s.environment.container.evidence[0], "interface eth0 ether mac-0 inet ipv4-0");
  EXPECT_EQ(s.libraries[0].failure->stderr_tail,
            "connecting to [ipv6-0]:5000 from ipv6-1\ndevice uuid-0 busy; std::string at 12:00:00");
}

TEST(Redact, LeavesVersionsBusIdsAndVocabularyAlone) {
  const PlantedIdentifiers planted = plant_identifiers();
  Redactor redactor;
  const Report redacted = redactor.redact(planted_report(planted));
  const SystemSnapshot& s = redacted.snapshot;
  EXPECT_EQ(s.libraries[1].load.version, "12.8.4.1");
  EXPECT_EQ(s.libraries[1].load.path, "/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1");
  EXPECT_EQ(s.nvml.library.version, "13.580.159.04");
  EXPECT_EQ(s.gpus[1].pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(s.kernel_module.version, "580.159.04");
  EXPECT_EQ(s.host.os, "Ubuntu 24.04.1 LTS");
  EXPECT_EQ(s.host.kernel, "6.8.0-45-generic");
  EXPECT_EQ(redacted.context.generated_at, "2026-11-21T12:00:00Z");
  EXPECT_EQ(s.environment.variables.at("NCCL_SOCKET_IFNAME"), "eth0");
}

TEST(Redact, AVersionOfTheReportInFreeTextIsNoAddress) {
  const PlantedIdentifiers planted = plant_identifiers();
  Report report = planted_report(planted);
  ASSERT_EQ(report.snapshot.libraries[1].load.version, "12.8.4.1");
  CheckResult result;
  result.check_id = "fw.pytorch";
  result.summary = "PyTorch loads cublas 12.8.4.1 (RPATH); the NFS server is 10.20.30.40";
  report.results.push_back(result);
  Redactor redactor;
  const Report redacted = redactor.redact(report);
  const std::string& summary = redacted.results.back().summary;
  EXPECT_NE(summary.find("cublas 12.8.4.1 (RPATH)"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("10.20.30.40"), std::string::npos) << summary;
  EXPECT_NE(summary.find("the NFS server is ipv4-"), std::string::npos) << summary;
}

TEST(Redact, ScrubFindsEachPatternInFreeText) {
  Redactor redactor;
  EXPECT_EQ(redactor.scrub("inet 192.168.17.4/24 brd 192.168.17.255"), "inet ipv4-0/24 brd ipv4-1");
  EXPECT_EQ(redactor.scrub("again 192.168.17.4."), "again ipv4-0.");
  EXPECT_EQ(redactor.scrub("inet6 2001:db8::ff00:42:8329/64 and ::ffff:10.0.0.1"),
            "inet6 ipv6-0/64 and ipv6-1");
  EXPECT_EQ(redactor.scrub("link/ether 3C:EC:EF:01:02:0A brd ff:ff:ff:ff:ff:ff"),
            "link/ether mac-0 brd mac-1");
  EXPECT_EQ(redactor.scrub("same 3c-ec-ef-01-02-0a"), "same mac-0");
  EXPECT_EQ(redactor.scrub("GPU-8c02e5d1-3e7a-4b90-b2c6-7f10d4a8e920 and "
                           "8C02E5D1-3E7A-4B90-B2C6-7F10D4A8E920"),
            "GPU-0 and GPU-0");
  EXPECT_EQ(redactor.scrub("/home/alice/x and /Users/bob and alice's job"),
            "/home/user-0/x and /Users/user-1 and user-0's job");
}

TEST(Redact, ScrubLeavesLookalikesAlone) {
  Redactor redactor;
  for (const std::string text :
       {"libcudnn.so.9.1.0.70", "v1.2.3.4", "cuBLAS 12.8.4.1.5", "999.1.1.1", "0000:3b:00.0",
        "2026-11-21T12:00:00Z", "std::string cudnn::backend", "deadbeef::cafe", "1:2:3:4:5:6:7:8:9",
        "00:1a:2b:3c:4d:5e:6f", "8c02e5d1-3e7a-4b90-b2c6-7f10d4a8e920x"}) {
    EXPECT_EQ(redactor.scrub(text), text);
  }
}

TEST(Redact, VocabularyUserIsReplacedInHomePathsOnly) {
  Redactor redactor;
  EXPECT_EQ(redactor.scrub("/home/nvidia/cuda and /usr/lib/nvidia"),
            "/home/user-0/cuda and /usr/lib/nvidia");
  EXPECT_FALSE(render::is_replaceable_name("nvidia"));
  EXPECT_FALSE(render::is_replaceable_name("x"));
  EXPECT_FALSE(render::is_replaceable_name("1000"));
  EXPECT_TRUE(render::is_replaceable_name("alice"));
}

TEST(Redact, HintedNamesAreReplacedAsWordsOnly) {
  RedactionHints hints;
  hints.user_names = {"carol"};
  hints.host_names = {"gpunode7.lab.example"};
  Redactor redactor(hints);
  // A word the name begins goes whole (AUserNameInsideACompoundWordIsRedacted); one it is only
  // inside of stays.
  EXPECT_EQ(redactor.scrub("carol ran it on gpunode7 (gpunode7.lab.example); carolyn did not; "
                           "xcarolx neither"),
            "user-0 ran it on host-0 (host-0); user-0 did not; xcarolx neither");
}

// Issue 34: a user name inside a compound word (/tmp/alicedir/alice_gpu.tgz) survived. A run of
// letters and digits that begins or ends with the name goes whole; names that begin or end a
// word of the report's own (a check id's "cudnn") and names under four characters do not.
TEST(Redact, AUserNameInsideACompoundWordIsRedacted) {
  RedactionHints hints;
  hints.user_names = {"alice", "bob", "cudn"};
  Redactor redactor(hints);
  const Report redacted = redactor.redact(planted_report(plant_identifiers())); // learns "cudnn"
  ASSERT_FALSE(redacted.results.empty());
  const std::string scrubbed =
      redactor.scrub("/tmp/alicedir/alice_gpu.tgz, /data/myalice/x, bobby, libs.cudnn, cudn");
  EXPECT_EQ(scrubbed.find("alice"), std::string::npos) << scrubbed;
  EXPECT_EQ(scrubbed, "/tmp/user-0/user-0_gpu.tgz, /data/user-0/x, bobby, libs.cudnn, user-2");
  // Twice: nothing more changes.
  EXPECT_EQ(redactor.scrub(scrubbed), scrubbed);
}

// A user called like a status or a check-id part broke `report` and `--bundle`
// (exit 3: "pass" no longer parsed as a status) or mangled check ids.
TEST(Redact, UsersNamedLikeTheReportsVocabularyLeaveItIntact) {
  const PlantedIdentifiers planted = plant_identifiers();
  const Report original = planted_report(planted);
  for (const char* name : {"pass", "driver", "fail", "gpu", "compat"}) {
    RedactionHints hints;
    hints.user_names = {name};
    Redactor redactor(hints);
    Report redacted;
    ASSERT_NO_THROW(redacted = redactor.redact(original)) << name;
    ASSERT_EQ(redacted.results.size(), original.results.size());
    for (size_t i = 0; i < original.results.size(); ++i) {
      EXPECT_EQ(redacted.results[i].check_id, original.results[i].check_id) << name;
      EXPECT_EQ(redacted.results[i].status, original.results[i].status) << name;
      ASSERT_EQ(redacted.results[i].findings.size(), original.results[i].findings.size());
      for (size_t f = 0; f < original.results[i].findings.size(); ++f) {
        EXPECT_EQ(redacted.results[i].findings[f].code, original.results[i].findings[f].code);
      }
    }
    // Still replaced where it is clearly a user: in a home path.
    EXPECT_EQ(redactor.scrub(std::string("/home/") + name + "/venv"), "/home/user-0/venv") << name;
  }
}

TEST(Redact, AMacAfterADashIsRedactedToo) {
  Redactor redactor;
  const std::string scrubbed =
      redactor.scrub("link veth-02:42:ac:11:00:02 and eth0-0a:1b:2c:3d:4e:5f");
  EXPECT_EQ(scrubbed.find("02:42:ac:11:00:02"), std::string::npos) << scrubbed;
  EXPECT_EQ(scrubbed.find("0a:1b:2c:3d:4e:5f"), std::string::npos) << scrubbed;
  // A dash-separated run longer than a MAC is not one.
  EXPECT_EQ(redactor.scrub("id 00-11-22-33-44-55-66"), "id 00-11-22-33-44-55-66");
}

TEST(Redact, CredentialsInUrlsAreRedacted) {
  Redactor redactor;
  const std::string scrubbed =
      redactor.scrub("https_proxy=http://alice:s3cr3tT0ken@proxy.example:3128 and "
                     "https://__token__:pypi-AgEIcHlwaS5vcmc@upload.example/simple");
  EXPECT_EQ(scrubbed.find("s3cr3tT0ken"), std::string::npos) << scrubbed;
  EXPECT_EQ(scrubbed.find("pypi-AgEIcHlwaS5vcmc"), std::string::npos) << scrubbed;
  EXPECT_NE(scrubbed.find("http://credentials@proxy.example:3128"), std::string::npos) << scrubbed;
  EXPECT_EQ(redactor.scrub("see https://docs.nvidia.com/cuda/"),
            "see https://docs.nvidia.com/cuda/");
}

// CUDA_VISIBLE_DEVICES takes UUID prefixes ("GPU-8c02e5d1", "MIG-1a2b"); they
// identify the GPU as the whole UUID does. A prefix of a GPU the report names gets that GPU's
// placeholder.
TEST(Redact, UuidPrefixesInVisibleDevicesAreRedacted) {
  const PlantedIdentifiers planted = plant_identifiers();
  SCOPED_TRACE(fmt::format("seed {}", planted.seed));
  Report report = planted_report(planted);
  const std::string prefix0 = planted.uuid0.substr(0, 8);
  const std::string prefix1 = planted.uuid1.substr(0, 4);
  const std::string stray = planted.stray_uuid.substr(0, 11); // "8c02e5d1-3e": with its dash
  const std::string mig = planted.mig_uuid.substr(0, 6);
  report.snapshot.environment.variables["CUDA_VISIBLE_DEVICES"] =
      "GPU-" + prefix0 + ",gpu-" + prefix1 + ",GPU-" + stray + ",MIG-" + mig;
  Redactor redactor;
  const Report redacted = redactor.redact(report);
  const std::string visible = redacted.snapshot.environment.variables.at("CUDA_VISIBLE_DEVICES");
  for (const std::string& value : {prefix0, prefix1, stray, mig}) {
    EXPECT_EQ(visible.find(value), std::string::npos) << value << " survives: " << visible;
  }
  // GPU 0's prefix is GPU 0 (its UUID's placeholder in the inventory).
  EXPECT_EQ(visible.substr(0, visible.find(',')), redacted.snapshot.gpus[0].uuid) << visible;
  EXPECT_NE(visible.find(redacted.snapshot.gpus[1].uuid), std::string::npos) << visible;

  // The healthy twin: ordinals, placeholders and words that merely start like one stay.
  Redactor plain;
  for (const char* text : {"CUDA_VISIBLE_DEVICES=0,1", "GPU-0 and GPU-12 and MIG-3",
                           "GPU-accelerated gpu-burn", "GPU-abc"}) {
    EXPECT_EQ(plain.scrub(text), text);
  }
}

// A user known from the passwd file is replaced outside /home too (/scratch/bob,
// /data/users/bob), in captured variables and free text.
TEST(Redact, OtherUsersOutsideHomeAreRedacted) {
  const PlantedIdentifiers planted = plant_identifiers();
  SCOPED_TRACE(fmt::format("seed {}", planted.seed));
  Report report = planted_report(planted);
  const std::string bob = planted.hint_user;
  report.snapshot.environment.variables["LD_LIBRARY_PATH"] =
      "/scratch/" + bob + "/cuda/lib64:/data/users/" + bob + "/venv/lib:/usr/lib";
  report.snapshot.environment.variables["CUDA_CACHE_PATH"] = "/nfs/" + bob + ".cache/nv";
  RedactionHints hints;
  hints.user_names = probes::login_names_from_passwd(
      "root:x:0:0:root:/root:/bin/bash\n" + bob + ":x:1001:1001::/scratch/" + bob + ":/bin/bash\n");
  ASSERT_EQ(hints.user_names, std::vector<std::string>{bob});
  Redactor redactor(hints);
  const Report redacted = redactor.redact(report);
  for (const auto& [format, text] : all_formats(redacted)) {
    EXPECT_EQ(text.find(bob), std::string::npos) << bob << " survives in " << format;
  }
  EXPECT_EQ(redacted.snapshot.environment.variables.at("LD_LIBRARY_PATH"),
            "/scratch/user-0/cuda/lib64:/data/users/user-0/venv/lib:/usr/lib");
}

// Tokens inside captured variables and free text (a query parameter, NAME=value
// with a secret's name, a bearer token, words shaped like well-known tokens) never reach a ticket.
TEST(Redact, TokensInsideCapturedVariablesAreRedacted) {
  std::mt19937 rng(std::random_device{}());
  const auto random = [&rng](size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      out += "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[rng() % 62];
    }
    return out + "7"; // a digit, as every real token has
  };
  const std::vector<std::string> secrets = {random(20),
                                            random(24),
                                            random(16),
                                            "ghp_" + random(36),
                                            "hf_" + random(34),
                                            "glpat-" + random(20),
                                            "AKIA" + random(16),
                                            "xoxb-" + random(24),
                                            "sk-proj-" + random(40),
                                            "eyJ" + random(20) + "." + random(30) + "." +
                                                random(20)};
  Report report = planted_report(plant_identifiers());
  auto& variables = report.snapshot.environment.variables;
  variables["CUDA_MPS_PIPE_DIRECTORY"] = "/run/mps?access_token=" + secrets[0] + "&uid=1";
  variables["LD_PRELOAD"] =
      "/opt/hook.so HF_TOKEN=" + secrets[1] + " AWS_SECRET_ACCESS_KEY=" + secrets[2];
  variables["NVIDIA_REQUIRE_CUDA"] = "cuda>=12.0 " + secrets[3] + " " + secrets[4];
  variables["CUDA_CACHE_PATH"] = "/tmp/" + secrets[5] + "/" + secrets[6];
  report.results.front().summary =
      "sent Authorization: Bearer " + secrets[9] + " and " + secrets[7] + ", " + secrets[8] + ".";
  Redactor redactor;
  const Report redacted = redactor.redact(report);
  for (const auto& [format, text] : all_formats(redacted)) {
    for (const std::string& secret : secrets) {
      EXPECT_EQ(text.find(secret), std::string::npos) << secret << " survives in " << format;
    }
  }
  EXPECT_NE(redacted.snapshot.environment.variables.at("CUDA_MPS_PIPE_DIRECTORY")
                .find("access_token=secret-"),
            std::string::npos);
  // The healthy twin: paths, versions and words like a token's start are no secret.
  Redactor plain;
  for (const char* text :
       {"/opt/hf_cache_directory_for_models/lib", "sk-learn-is-not-a-token", "NCCL_DEBUG=INFO",
        "cuda>=12.0 driver>=550", "token= (empty)", "libnvidia-ml.so.580.159.04",
        "NVIDIA_DRIVER_CAPABILITIES=compute,utility"}) {
    EXPECT_EQ(plain.scrub(text), text);
  }
}

// A user named like any word of the report's own ids (a check-id part such as
// "ecc" or "memory", not only the fixed list) leaves the ids, codes and statuses intact.
TEST(Redact, UsersNamedLikeAnyIdPartOfThisReportLeaveItIntact) {
  const PlantedIdentifiers planted = plant_identifiers();
  Report original = planted_report(planted);
  // Free text names check ids and codes too ("see driver.nvml"): they must survive as well.
  std::string ids;
  for (const CheckResult& result : original.results) {
    ids += " " + result.check_id;
    for (const Finding& finding : result.findings) {
      ids += " " + finding.code;
    }
  }
  for (CheckResult& result : original.results) {
    result.summary += "; related:" + ids;
  }
  for (const CheckResult& result : original.results) {
    const std::string id = result.check_id;
    const std::string part = id.substr(id.find('.') + 1); // "ecc", "cudnn": in no fixed list
    RedactionHints hints;
    hints.user_names = {part};
    hints.host_names = {part};
    Redactor redactor(hints);
    const Report redacted = redactor.redact(original);
    ASSERT_EQ(redacted.results.size(), original.results.size());
    for (size_t i = 0; i < original.results.size(); ++i) {
      EXPECT_EQ(redacted.results[i].check_id, original.results[i].check_id) << part;
      ASSERT_EQ(redacted.results[i].findings.size(), original.results[i].findings.size());
      for (size_t f = 0; f < original.results[i].findings.size(); ++f) {
        EXPECT_EQ(redacted.results[i].findings[f].code, original.results[i].findings[f].code);
      }
      // The ids and codes in the free text are intact.
      const std::string& summary = redacted.results[i].summary;
      EXPECT_EQ(summary.substr(summary.find("; related:")), "; related:" + ids)
          << part << ": " << summary;
    }
    EXPECT_EQ(redactor.scrub("/home/" + part + "/x"), "/home/user-0/x") << part;
  }
}

TEST(Redact, ValuesLabelledAsSerialsOrGuidsAreLearnedFromProgramOutput) {
  Redactor redactor;
  const std::string text = "    Serial Number                   : 1652322012345\n"
                           "        Chassis Serial Number       : 1821923006789  \n"
                           "    Serial Number                   : N/A\n"
                           "    Serial Number                   : [N/A]\n"
                           "        GPU Fabric GUID             : 0x8c02e5d1a2b3c4d5\n"
                           "        GPU Fabric GUID             : N/A\n"
                           "    GPU PDI                         : 0x98c2bec5b59a6b4e\n"
                           "\tCapabilities: [1c0 v1] Device Serial Number 48-b0-2d-ff-ff-7a-55-1c\n"
                           "\t\t\t[SN] Serial number: MT2034X01234\n"
                           "\t\t\t[PN] Part number: MCX755106AS-HEAT\n"
                           "serial number\n";
  redactor.learn_labelled_serials(text);
  EXPECT_EQ(redactor.scrub(text), "    Serial Number                   : serial-0\n"
                                  "        Chassis Serial Number       : serial-1  \n"
                                  "    Serial Number                   : N/A\n"
                                  "    Serial Number                   : [N/A]\n"
                                  "        GPU Fabric GUID             : guid-0\n"
                                  "        GPU Fabric GUID             : N/A\n"
                                  "    GPU PDI                         : guid-1\n"
                                  "\tCapabilities: [1c0 v1] Device Serial Number serial-2\n"
                                  "\t\t\t[SN] Serial number: serial-3\n"
                                  "\t\t\t[PN] Part number: MCX755106AS-HEAT\n"
                                  "serial number\n");
  // Learned values are replaced wherever they stand, with the same placeholder.
  EXPECT_EQ(redactor.scrub("board 1652322012345 in chassis 1821923006789"),
            "board serial-0 in chassis serial-1");
}

TEST(Redact, RedactingTwiceChangesNothingMore) {
  const PlantedIdentifiers planted = plant_identifiers();
  Redactor first;
  const Report once = first.redact(planted_report(planted));
  Redactor second;
  EXPECT_EQ(second.redact(once), once);
}

} // namespace
} // namespace gpucheck::testing
