// STUB: to be replaced by the real probe.
#include "probes/collect.hpp"

namespace gpucheck::probes {
HostInfo probe_host(const Sysroot&) {
  return {};
}
} // namespace gpucheck::probes
