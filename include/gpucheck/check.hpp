#pragma once
/// A check judges facts and returns results; it never prints, exits or throws for a problem it
/// finds.

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/check_result.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck {

namespace engine {
class GpuEngine;
} // namespace engine

enum class CheckKind {
  passive, ///< a pure function over the snapshot
  active   ///< runs work on the GPU, in a child process with a deadline
};

/// How deep a run goes (`--level`): quick judges without GPU work, standard adds the short
/// verified GPU work (about a second), long adds the hardware under load (memory test, sustained
/// GEMM burn; docs/checks.md, "Levels").
enum class Level { quick, standard, long_ };

/// "quick", "standard", "long".
std::string_view to_string(Level level);
/// The level of a name; nullopt for another word.
std::optional<Level> level_named(std::string_view name);

struct CheckInfo {
  std::string_view id;          ///< "<area>.<name>", used by --only/--skip prefixes
  std::string_view title;       ///< short human title
  std::string_view description; ///< one sentence: what it verifies
  CheckKind kind = CheckKind::passive;
  /// The lowest level that runs it: a check of the long level is left out of lower levels'
  /// reports altogether (not a SKIP line in every standard run).
  Level level = Level::quick;
};

/// Options that reach checks (thresholds, level). Kept small and plain.
struct CheckOptions {
  bool quick = false; ///< no GPU work
  /// Why active checks are skipped when `quick` is set: "--quick" or a replayed snapshot.
  std::string no_gpu_work_reason = "--quick: no GPU work";
  std::chrono::milliseconds timeout{30000};  ///< per active check
  Level level = Level::standard;             ///< --level (quick also sets `quick`)
  std::chrono::milliseconds duration{60000}; ///< --duration: each timed phase of the long level
  bool force = false; ///< --force: the long level also runs on GPUs that other processes use
};

struct CheckContext {
  const SystemSnapshot& snapshot;
  CheckOptions options;
  /// The GPU engine that runs the active checks' children (src/engine/gpu_engine.hpp), or
  /// nullptr when no active check is selected.
  engine::GpuEngine* gpu_engine = nullptr;
};

using CheckFn = std::vector<CheckResult> (*)(const CheckContext& context);

struct FindingSpec; // findings/catalog.hpp
/// A check's own finding entries, spelt in its own file (or folder) rather than in a table of
/// src/findings/: the registry adds them to the catalogue.
using FindingTable = std::span<const FindingSpec> (*)();

struct CheckDef {
  CheckInfo info;
  CheckFn run;
  FindingTable findings = nullptr; ///< its own entries; nullptr: its codes are in src/findings/
};

/// A result for `info` whose status follows its worst finding (no finding: pass).
CheckResult make_result(const CheckInfo& info, std::string summary, std::vector<Finding> findings,
                        std::optional<int> gpu_index = std::nullopt);

/// A skipped result; `reason` says why no work was done.
CheckResult skip_result(const CheckInfo& info, std::string reason,
                        std::optional<int> gpu_index = std::nullopt);

/// An error result: the check could not do its work (not a verdict on the system).
CheckResult error_result(const CheckInfo& info, std::string reason,
                         std::optional<int> gpu_index = std::nullopt);

} // namespace gpucheck
