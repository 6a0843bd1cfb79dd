#pragma once
/// One factory per check (each defined in its own file in src/checks/); the registry orders them.

#include "gpucheck/check.hpp"

namespace gpucheck::checks {

CheckDef placeholder_check(); // TODO(checks helper): replace with the real checks

} // namespace gpucheck::checks
