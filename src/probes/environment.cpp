// STUB: to be replaced by the real probe.
#include "probes/collect.hpp"

namespace gpucheck::probes {
EnvironmentInfo probe_environment(const Sysroot&, const Environment&) {
  return {};
}
} // namespace gpucheck::probes
