#include "gpucheck/registry.hpp"

#include "checks/checks.hpp"

namespace gpucheck {

std::span<const CheckDef> all_checks() {
#define GPUCHECK_REGISTER_CHECK(factory) checks::factory(),
  static const CheckDef k_checks[] = {GPUCHECK_CHECKS(GPUCHECK_REGISTER_CHECK)};
#undef GPUCHECK_REGISTER_CHECK
  return k_checks;
}

} // namespace gpucheck
