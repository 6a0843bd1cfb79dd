#pragma once
/// The Python framework checks: one result per Python environment, its summary naming
/// the environment. Rules in fw_rules.hpp; findings in findings_frameworks.cpp.

#include "gpucheck/check.hpp"

namespace gpucheck::checks {

CheckDef fw_environments_check(); ///< fw.environments: interpreters found and answered
CheckDef fw_pytorch_check();      ///< fw.pytorch
CheckDef fw_tensorflow_check();   ///< fw.tensorflow
CheckDef fw_jax_check();          ///< fw.jax
CheckDef fw_onnxruntime_check();  ///< fw.onnxruntime
CheckDef fw_tensorrt_check();     ///< fw.tensorrt
CheckDef fw_cupy_check();         ///< fw.cupy
CheckDef fw_import_check();       ///< fw.import: --import results

} // namespace gpucheck::checks
