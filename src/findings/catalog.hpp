#pragma once
/// The one catalogue of findings: every Finding gpucheck emits is made here from a stable code.
///
/// A released code never changes meaning. Message and remedy are fmt templates filled with the
/// same positional arguments ({0}, {1}, ...), so a remedy can name the exact versions involved;
/// each spec says what every argument stands for, which `gpucheck explain CODE` prints.

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "findings/codes.hpp"
#include "gpucheck/model/finding.hpp"

namespace gpucheck {

/// Whether a finding means a broken node that a cluster should take out of service (Slurm: drain;
/// Kubernetes: a GPU problem condition). `yes` only where the finding itself shows that the GPU
/// hardware or the node's driver installation is broken, so jobs there fail or compute wrong
/// results until an admin acts (reset, reboot, reinstall, RMA). `no` for the process environment,
/// containers, WSL2, other tenants' processes (contention), performance warnings and library or
/// framework versions: those never drain (docs/findings.md, "Drain"; docs/fleet.md).
enum class Drain : bool { no, yes };

/// "yes" or "no", as docs/findings.md and `gpucheck explain` write it.
constexpr std::string_view to_string(Drain drain) {
  return drain == Drain::yes ? "yes" : "no";
}

/// The most positional arguments a finding's templates take.
inline constexpr std::size_t k_max_placeholders = 10;

struct FindingSpec {
  std::string_view code;        ///< "<area>.<problem>", snake_case, stable
  Severity severity;            ///< default severity
  std::string_view title;       ///< a few words, for lists
  std::string_view explanation; ///< the cause in plain words, for `gpucheck explain`
  std::string_view message;     ///< fmt template, filled from facts
  std::string_view remedy;      ///< fmt template; what to do, with versions
  /// What each argument stands for: placeholders[N] describes {N}, empty past the last one (and
  /// for a code whose templates take none). Written with where(...) in the tables;
  /// tests/unit/findings/finding_catalog_test.cpp checks that the described indices are exactly
  /// those the templates use.
  std::array<std::string_view, k_max_placeholders> placeholders{};
  /// Whether the finding drains the node (Drain): written after where(...) in the tables, and
  /// only for `yes`.
  Drain drain = Drain::no;
};

/// FindingSpec::placeholders in a table: where("GPU index", "copy direction") says what {0} and
/// {1} stand for.
template <typename... Names>
constexpr std::array<std::string_view, k_max_placeholders> where(const Names&... names) {
  static_assert(sizeof...(Names) <= k_max_placeholders, "raise k_max_placeholders");
  return {std::string_view(names)...};
}

/// What recurring arguments stand for, for the tables and the checks that spell their findings.
inline constexpr std::string_view k_where_container =
    "the container runtime (docker, podman, kubernetes, ...)";
inline constexpr std::string_view k_where_stderr = "the end of its stderr";
inline constexpr std::string_view k_where_gpu_index = "GPU index";

/// Every finding spec, sorted by code.
std::span<const FindingSpec> finding_catalog();
/// Add a check's own table (a check of its own folder, src/gpu_checks/) at start-up. Throws
/// std::logic_error once the catalogue was read: its entries would be missing from it.
void add_finding_table(std::span<const FindingSpec> table);

/// The spec for a code, or nullptr.
const FindingSpec* find_finding_spec(std::string_view code);

/// Build a finding from the catalogue. Throws std::logic_error for a code without an entry (which
/// tests/unit/findings/finding_catalog_test.cpp rules out for every constant of codes.hpp) or a
/// template that does not fit its arguments: both are programming errors, which the runner turns
/// into an `error` result for that check alone.
template <typename... Args>
Finding make_finding(FindingCode code, std::optional<int> gpu_index, const Args&... args) {
  const FindingSpec* spec = find_finding_spec(code);
  if (spec == nullptr) {
    throw std::logic_error(fmt::format("finding code '{}' is not in the catalogue", code));
  }
  Finding finding;
  finding.code = std::string(spec->code);
  finding.severity = spec->severity;
  finding.gpu_index = gpu_index;
  try {
    finding.message = fmt::vformat(spec->message, fmt::make_format_args(args...));
    finding.remedy = fmt::vformat(spec->remedy, fmt::make_format_args(args...));
  } catch (const fmt::format_error& e) {
    throw std::logic_error(fmt::format("finding '{}': template error: {}", code, e.what()));
  }
  return finding;
}

/// Same, with the severity raised or lowered from the catalogue default (e.g. persistence off is
/// info on a workstation and warn on a multi-GPU server).
template <typename... Args>
Finding make_finding_as(Severity severity, FindingCode code, std::optional<int> gpu_index,
                        const Args&... args) {
  Finding finding = make_finding(code, gpu_index, args...);
  finding.severity = severity;
  return finding;
}

} // namespace gpucheck
