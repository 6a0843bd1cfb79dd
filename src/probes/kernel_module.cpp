// STUB: to be replaced by the real probe.
#include "probes/collect.hpp"

namespace gpucheck::probes {
KernelModuleInfo probe_kernel_module(const Sysroot&) {
  return {};
}
} // namespace gpucheck::probes
