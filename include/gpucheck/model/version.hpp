#pragma once
/// Dotted version numbers as the compatibility data and the probes spell them: driver versions
/// ("580.65.06", "615"), CUDA versions ("13.0", or the integer 13010), compute capabilities
/// ("8.6", "sm_86").

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

/// A dotted numeric version. Comparison is component by component; a missing component counts
/// as lower ("580" < "580.65.06"), so a branch-only minimum ("615") is met by every 615.x driver.
class Version {
public:
  Version() = default;
  explicit Version(std::vector<int> parts) : m_parts(std::move(parts)) {}

  /// Parse "580.65.06" (leading zeros allowed). nullopt for anything that is not 1 to 4 dot
  /// separated decimal numbers.
  static std::optional<Version> parse(std::string_view text);
  /// The dotted numbers a version text starts with, however it goes on ("580.159.04-open" ->
  /// 580.159.4, "9.10.2" -> 9.10.2); empty when it starts with none. For versions read from
  /// libraries, packages and file names, which carry suffixes.
  static Version leading(std::string_view text);

  [[nodiscard]] const std::vector<int>& parts() const { return m_parts; }
  /// Named so that glibc's major()/minor() macros (sys/sysmacros.h) cannot clash.
  [[nodiscard]] int major_number() const { return m_parts.empty() ? 0 : m_parts[0]; }
  [[nodiscard]] int minor_number() const { return m_parts.size() > 1 ? m_parts[1] : 0; }
  [[nodiscard]] bool empty() const { return m_parts.empty(); }
  /// The first `count` components ("13.0.88" -> "13.0" for count 2).
  [[nodiscard]] Version truncated(size_t count) const;
  /// The dotted spelling; driver point releases keep two digits ("580.65.06").
  [[nodiscard]] std::string str() const;

  /// Component by component; a version that is a prefix of another sorts first ("12.4" <
  /// "12.4.0"): the compatibility matrix's ranges rely on it (in_range).
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const = default;

private:
  std::vector<int> m_parts;
};

/// Component by component, a missing component counting as 0 ("9.1" == "9.1.0"): how two
/// installed copies of a library compare.
std::strong_ordering compare_padded(const Version& a, const Version& b);

/// Whether `v` lies in [from, to], where `to` is inclusive at its own precision: "9.5" includes
/// "9.5.1" and "9.5.1.17".
bool in_range(const Version& v, const Version& from, const Version& to);

/// CUDA version from the CUDART_VERSION / cuDriverGetVersion encoding: 13010 -> "13.1".
Version cuda_from_int(int64_t encoded);

/// A compute capability "8.6" or "sm_86" / "sm_120" / "compute_90" / "86" -> {8, 6}. nullopt when
/// it cannot be read.
std::optional<Version> parse_cc(std::string_view text);

/// "sm_86" spelling of a compute capability.
std::string sm_name(const Version& cc);

} // namespace gpucheck
