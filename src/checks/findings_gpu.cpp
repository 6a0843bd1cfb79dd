#include "core/finding_tables.hpp"

namespace gpucheck {

// Active GPU check findings (issue 4). Empty until those checks land.
std::span<const FindingSpec> findings_gpu() { return {}; }

} // namespace gpucheck
