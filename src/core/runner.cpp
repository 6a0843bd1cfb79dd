#include "gpucheck/runner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>

#include "process/trace.hpp"

namespace gpucheck {

std::vector<CheckResult> run_checks(std::span<const CheckDef> checks, const CheckContext& context,
                                    const Selection& selection) {
  std::vector<CheckResult> results;
  for (const CheckDef& check : checks) {
    if (!is_selected(check.info.id, selection) ||
        static_cast<int>(check.info.level) > static_cast<int>(context.options.level)) {
      continue;
    }
    if (context.options.quick && check.info.kind == CheckKind::active) {
      results.push_back(skip_result(check.info, context.options.no_gpu_work_reason));
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<CheckResult> produced;
    try {
      produced = check.run(context);
    } catch (const std::exception& e) {
      produced = {error_result(check.info, fmt::format("internal error in check: {}", e.what()))};
    } catch (...) {
      produced = {error_result(check.info, "internal error in check: unknown exception")};
    }
    if (produced.empty()) {
      // A check that returned nothing did no work: that is never a pass.
      produced.push_back(error_result(check.info, "check produced no result"));
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (elapsed.count() > 0) {
      process::trace(fmt::format("check {} took {} ms", check.info.id, elapsed.count()));
    }
    for (CheckResult& result : produced) {
      if (result.duration.count() == 0) {
        result.duration = elapsed;
      }
      results.push_back(std::move(result));
    }
  }
  return results;
}

} // namespace gpucheck
