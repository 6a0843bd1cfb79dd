#include "core/finding_tables.hpp"

namespace gpucheck {

namespace {
constexpr FindingSpec k_table[] = {
    {"driver.missing", Severity::fail, "NVIDIA driver not installed",
     "No NVIDIA kernel module is loaded and no driver library could be found.",
     "no NVIDIA driver: /proc/driver/nvidia/version is absent and libcuda.so.1 cannot be loaded",
     "install the NVIDIA driver for this GPU (e.g. apt install nvidia-driver-580 or the .run "
     "installer from nvidia.com), then reboot"},
};
} // namespace

std::span<const FindingSpec> findings_system() { return k_table; }

} // namespace gpucheck
