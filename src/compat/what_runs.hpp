#pragma once
/// Rule 8, "what can this machine run": the newest CUDA the driver supports and the newest
/// framework builds and cuDNN releases that fit the driver and every GPU present.

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

#include "compat/matrix.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::compat {

/// How a PyTorch wheel fits a machine.
enum class WheelFit {
  fits,            ///< driver runs its CUDA, and it has SASS for every GPU
  fits_ptx_jit,    ///< a GPU is covered only by the wheel's PTX (JIT on first use)
  driver_too_old,  ///< the driver cannot run its CUDA
  gpu_not_covered, ///< a GPU has neither SASS nor PTX in the wheel
  archs_unknown,   ///< the matrix does not know the wheel's architectures
  driver_unknown   ///< the driver is not known
};

std::string_view to_string(WheelFit fit);

struct WheelVerdict {
  WheelFit fit = WheelFit::driver_unknown;
  bool minor_version = false; ///< the driver runs its CUDA only through MVC
  std::string reason;         ///< one line, e.g. "sm_120 is not in 3.7..9.0"
};

/// A hypothetical or probed machine: driver and GPU compute capabilities.
struct MachineQuery {
  std::optional<std::string> driver_text; ///< "535.104.05"
  std::optional<Version> driver;
  std::optional<Version> driver_cuda; ///< what the driver reports, when probed
  std::vector<Version> gpu_ccs;
  std::vector<std::string> gpu_names;
};

/// The query for a probed snapshot (GPUs placed by the matrix when their CC is missing).
MachineQuery query_from_snapshot(const SystemSnapshot& snapshot, const Matrix& matrix);

WheelVerdict fit_pytorch_wheel(const Matrix& matrix, const PytorchWheel& wheel,
                               const MachineQuery& query);

/// One recommended build.
struct Pick {
  std::string name;           ///< "PyTorch 2.14 cu132", "TensorFlow 2.21.0", "jax[cuda13]"
  std::string cuda;           ///< "13.2"
  bool minor_version = false; ///< runs through minor-version compatibility only
  bool ptx_jit = false;       ///< a GPU runs it through PTX JIT only
  bool unconfirmed = false;
  std::string note;
};

struct WhatRuns {
  std::string matrix_version;
  std::optional<std::string> driver_text;
  std::optional<std::string> newest_cuda;     ///< the driver's own CUDA version ("13.0")
  std::optional<std::string> newest_cuda_mvc; ///< newest known release reachable through MVC
  bool driver_unknown_to_matrix = false;
  std::vector<std::string> gpus;      ///< "sm_90 (NVIDIA H200)"
  std::optional<Pick> pytorch;        ///< newest fitting wheel
  std::optional<Pick> pytorch_native; ///< newest fitting wheel without MVC, if different
  std::optional<Pick> tensorflow;
  std::optional<Pick> jax;
  std::vector<std::string> cudnn; ///< releases (ranges) that fit the driver and every GPU
  std::vector<std::string> notes;
};

/// Rule 8 for a machine.
WhatRuns what_runs(const Matrix& matrix, const MachineQuery& query);

nlohmann::json to_json(const WhatRuns& what);

/// A few lines for a terminal.
std::string to_text(const WhatRuns& what);

/// One line for a check's summary / info finding.
std::string one_line(const WhatRuns& what);

} // namespace gpucheck::compat
