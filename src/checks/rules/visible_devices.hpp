#pragma once
/// CUDA_VISIBLE_DEVICES parsed the way the CUDA driver reads it at cuInit.
///
/// Rules (CUDA Programming Guide, environment variables; failures.md F16): entries are separated
/// by commas; an entry is a device index, a GPU UUID ("GPU-..."; a unique prefix is enough) or a
/// MIG device id ("MIG-..."); enumeration stops at the first invalid entry, so "0,2,-1,1" makes
/// GPUs 0 and 2 visible; an empty value hides every GPU. Indices count all GPUs (NVML sees the
/// same set; the order may differ unless CUDA_DEVICE_ORDER=PCI_BUS_ID).

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::checks {

/// What the parser needs to know about one GPU NVML reported.
struct VisibleGpuRef {
  int index = 0;
  std::string uuid; ///< "GPU-..."
  bool mig_enabled = false;
};

enum class VisibleEntryKind { index, gpu_uuid, mig_uuid, invalid };

struct VisibleEntry {
  std::string text; ///< the entry as written, trimmed
  VisibleEntryKind kind = VisibleEntryKind::invalid;
  std::optional<int> ordinal;    ///< for kind == index
  std::optional<int> nvml_index; ///< for a GPU UUID that matched one GPU
  bool accepted = false;         ///< CUDA enumerates it
  std::string problem;           ///< why it is invalid or ignored; empty when accepted
};

struct VisibleDevices {
  std::vector<VisibleEntry> entries;
  /// Position of the first invalid entry, where CUDA stops reading; nullopt when all are valid.
  std::optional<std::size_t> first_invalid;

  /// Number of entries CUDA will enumerate.
  [[nodiscard]] std::size_t accepted_count() const;
};

/// Parses `value`. With `gpus_known` the entries are checked against `gpus` (indices in range,
/// UUID prefixes matching exactly one GPU, MIG ids only when a GPU has MIG enabled); without it
/// only the form of each entry is checked.
VisibleDevices parse_visible_devices(std::string_view value, std::span<const VisibleGpuRef> gpus,
                                     bool gpus_known);

} // namespace gpucheck::checks
