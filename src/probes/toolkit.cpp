// STUB: to be replaced by the real probe.
#include "probes/collect.hpp"

namespace gpucheck::probes {
ToolkitInfo probe_toolkit(const Sysroot&, const Environment&) {
  return {};
}
} // namespace gpucheck::probes
