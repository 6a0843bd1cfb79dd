// STUB: to be replaced by the real probe.
#include "probes/collect.hpp"

namespace gpucheck::probes {
std::vector<LibraryFamily> discover_libraries(const Sysroot&, const Environment&) {
  return {};
}
} // namespace gpucheck::probes
