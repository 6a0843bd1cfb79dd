#pragma once
/// The catalogue is one lookup over a few domain tables, each in its own file of src/findings/:
///   table_system.cpp        driver, CUDA init, environment, libraries, GPU health
///   table_compat.cpp        compatibility-matrix verdicts
///   table_gpu.cpp           active GPU checks (kernels, bandwidth, cuDNN)
///   table_interconnect.cpp  NVLink, fabric, topology, P2P, NCCL (multi-GPU)
///   table_frameworks.cpp    Python frameworks (PyTorch, TensorFlow, JAX)
///   table_gates.cpp         CI gates (--expect-gpus, --require, --min, --fail-on)
/// Each entry's code is a constant of codes.hpp.
/// Codes are unique across all tables (tests/unit/findings/finding_catalog_test.cpp).

#include <span>
#include <vector>

#include "findings/catalog.hpp"

namespace gpucheck {

std::span<const FindingSpec> findings_system();
std::span<const FindingSpec> findings_compat();
std::span<const FindingSpec> findings_gpu();
std::span<const FindingSpec> findings_interconnect();
std::span<const FindingSpec> findings_frameworks();
std::span<const FindingSpec> findings_gates();

inline std::vector<std::span<const FindingSpec>> finding_tables() {
  return {findings_system(),       findings_compat(),     findings_gpu(),
          findings_interconnect(), findings_frameworks(), findings_gates()};
}

} // namespace gpucheck
