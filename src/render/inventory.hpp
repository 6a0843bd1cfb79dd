#pragma once
/// The machine as the text and Markdown reports show it, worked out once from the snapshot: each
/// library family's state and which of its copies its line names, the kernel modules, the
/// container, and each GPU's memory and PCIe link. The renderers only lay it out (text.cpp as
/// facts, markdown.cpp as tables) and choose their words; they read these instead of the raw
/// snapshot wherever both would otherwise work the same thing out.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::render {

/// What a library family's line says of it.
enum class LibraryState {
  probe_failed,            ///< its probe failed (LibraryFamily::failure)
  loaded,                  ///< loaded: its version and path
  not_found,               ///< not loaded, and no copy on disk
  not_loaded_in_this_mode, ///< on disk, not loaded on purpose (--quick skips the heavy libraries)
  does_not_load,           ///< on disk, but loading it failed (LibraryLoad::error)
};

struct LibraryCopyView {
  const LibraryCopy* copy = nullptr;
  /// The version the library reports, else its file's ("" when neither is known).
  std::string version;
  /// The copy the family's line names: the loaded one, or (not loaded in this mode) the first on
  /// disk.
  bool named_by_family = false;
};

struct LibraryView {
  const LibraryFamily* family = nullptr;
  std::string label; ///< "CUDA rt", "cuDNN", "cuBLAS", "NCCL", or the family's own name
  LibraryState state = LibraryState::not_found;
  std::string path; ///< loaded_path() of the family's load
  /// cuDNN: the CUDA runtime version it was built for (cudnnGetCudartVersion).
  std::optional<int> built_for_cuda;
  std::vector<LibraryCopyView> copies;
};

struct GpuView {
  const GpuInfo* gpu = nullptr;
  std::optional<uint64_t> memory_mib;
  /// The link now ({generation, width}) and at best, when NVML told both parts.
  std::optional<std::pair<int, int>> pcie_current;
  std::optional<std::pair<int, int>> pcie_max;
  /// "9.0": the compute capability, when known.
  std::optional<std::string> compute_capability;
};

struct Inventory {
  /// "nvidia loaded, nvidia_uvm absent, nouveau absent".
  std::string modules;
  /// The container kind ("docker", ...); empty, or "none", outside one.
  std::string container;
  [[nodiscard]] bool in_container() const { return !container.empty() && container != "none"; }
  std::optional<uint64_t> host_memory_gib;
  std::vector<GpuView> gpus;
  std::vector<LibraryView> libraries;
};

Inventory make_inventory(const SystemSnapshot& snapshot);

/// A loaded library's path: the path it was loaded by, else the file it resolved to.
std::string loaded_path(const LibraryLoad& load);

} // namespace gpucheck::render
