#pragma once
/// Redaction of what identifies a machine or a person in a report: the host name, user names in
/// home paths, IPv4/IPv6 and MAC addresses, GPU UUIDs and serial numbers (docs/report-format.md).
///
/// Each identifier is replaced by a stable placeholder ("host-0", "user-0", "GPU-0", "MIG-0",
/// "uuid-0", "serial-0", "guid-0", "ipv4-0", "ipv6-0", "mac-0"): within one Redactor, the same
/// identifier always gets the same placeholder, so a redacted report stays readable ("GPU-1 has ECC
/// errors" matches the inventory's GPU-1). GPU UUIDs and serials are numbered in NVML index order,
/// so GPU-N is usually the GPU with index N.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gpucheck/model/redaction_hints.hpp"
#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

class Redactor {
public:
  explicit Redactor(const RedactionHints& hints = {});

  /// A redacted copy of the report: every string in it (snapshot facts, results, findings,
  /// metrics' notes, the command line) is scrubbed, after the identifiers the snapshot names
  /// (host name, GPU UUIDs, serials, home directories anywhere in it) were learned. Version
  /// fields are left alone (a four-part version is not an IPv4 address).
  [[nodiscard]] Report redact(const Report& report);

  /// The same for a snapshot alone.
  [[nodiscard]] SystemSnapshot redact(const SystemSnapshot& snapshot);

  /// Free text (a raw source file, a message): every identifier learned so far and every IPv4,
  /// IPv6, MAC address, UUID and home-directory user found in the text is replaced.
  [[nodiscard]] std::string scrub(std::string_view text);

  /// Learn the identifiers a snapshot names, without redacting anything yet.
  void learn(const SystemSnapshot& snapshot);

  /// Learn the values that a program's output labels as serial numbers or GUIDs, so scrub()
  /// replaces them wherever they stand: nvidia-smi's "Serial Number : 1652...", "Chassis Serial
  /// Number" and "GPU Fabric GUID : 0x...", lspci's "Device Serial Number 00-11-...", and the
  /// VPD's "[SN] Serial number: ..." ("serial-N", "guid-N"; a serial the snapshot named keeps its
  /// placeholder). Called after redact(), so the GPUs' serials keep NVML's index order.
  void learn_labelled_serials(std::string_view text);

private:
  std::string placeholder(std::map<std::string, std::string>& table, const std::string& key,
                          std::string_view prefix);
  /// The report's own words (check-id parts, codes, statuses): a user or host of that name is
  /// then replaced in home paths only.
  void learn_vocabulary(const nlohmann::json& document);
  /// Whether a user or host name is replaced wherever it stands as a word.
  [[nodiscard]] bool is_word_name(std::string_view name) const;
  void learn_host(const std::string& host);
  void learn_user(const std::string& user);
  void learn_home_users(std::string_view text);
  std::string replace_literals(std::string text) const;
  std::string replace_home_users(std::string_view text);
  std::string replace_secrets(std::string_view text);
  std::string replace_uuids(std::string_view text);
  std::string replace_uuid_prefixes(std::string_view text);
  std::string replace_macs(std::string_view text);
  std::string replace_ipv6(std::string_view text);
  std::string replace_ipv4(std::string_view text);

  /// Literal identifier -> placeholder, applied at word boundaries, longest first.
  /// replace_literals()'s last pass: runs of letters and digits that begin or end with a user's
  /// name.
  [[nodiscard]] std::string replace_user_compounds(std::string text) const;
  std::map<std::string, std::string> m_literals;
  std::map<std::string, std::string> m_users;   ///< user name -> user-N
  std::map<std::string, std::string> m_uuids;   ///< lower-case 36-character UUID -> placeholder
  std::map<std::string, std::string> m_serials; ///< serial -> serial-N
  std::map<std::string, std::string> m_guids;   ///< GUID -> guid-N
  std::map<std::string, std::string> m_macs;    ///< lower-case MAC -> mac-N
  std::map<std::string, std::string> m_secrets; ///< token or secret value -> secret-N
  std::map<std::string, std::string> m_ipv4;
  /// Values of the report's version fields ("13.1.0.3"): the same dotted number in free text
  /// (a summary naming that version) is that version, not an address.
  std::set<std::string> m_versions;
  std::map<std::string, std::string> m_ipv6;
  std::map<std::string, int> m_counters; ///< next number per placeholder prefix
  std::set<std::string> m_gpu_uuids;     ///< UUIDs known to name a GPU (get "GPU-N")
  std::set<std::string> m_vocabulary;    ///< lower-case words of the report's closed sets
};

/// Whether a word is a plausible host or user name to replace wherever it stands (not a word of
/// the GPU stack's own vocabulary such as "nvidia" or "cuda", and at least two characters).
bool is_replaceable_name(std::string_view name);

} // namespace gpucheck::render
