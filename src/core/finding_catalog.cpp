#include "gpucheck/finding_catalog.hpp"

#include <algorithm>
#include <array>

namespace gpucheck {

namespace {

// Sorted by code (a unit test enforces it). Message and remedy share positional arguments.
constexpr FindingSpec k_catalog[] = {
    {"driver.missing", Severity::fail, "NVIDIA driver not installed",
     "No NVIDIA kernel module is loaded and no driver library could be found.",
     "no NVIDIA driver: /proc/driver/nvidia/version is absent and libcuda.so.1 cannot be loaded",
     "install the NVIDIA driver for this GPU (e.g. apt install nvidia-driver-580 or the .run "
     "installer from nvidia.com), then reboot"},
};

} // namespace

std::span<const FindingSpec> finding_catalog() {
  return k_catalog;
}

const FindingSpec* find_finding_spec(std::string_view code) {
  const auto* it =
      std::lower_bound(std::begin(k_catalog), std::end(k_catalog), code,
                       [](const FindingSpec& spec, std::string_view c) { return spec.code < c; });
  if (it != std::end(k_catalog) && it->code == code) {
    return it;
  }
  return nullptr;
}

} // namespace gpucheck
