#include "core/finding_tables.hpp"

namespace gpucheck {

// Compatibility-matrix findings (issue 3). Empty until the rules land.
std::span<const FindingSpec> findings_compat() { return {}; }

} // namespace gpucheck
