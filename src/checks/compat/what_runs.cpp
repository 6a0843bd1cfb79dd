#include "compat/what_runs.hpp"
#include "checks/compat/common.hpp"
#include "compat/matrix.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"compat.what_runs", "What this machine can run",
                           "The newest CUDA, PyTorch, TensorFlow, JAX and cuDNN builds that fit "
                           "this driver and every GPU (gpucheck matrix shows details).",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  const compat::Matrix& matrix = compat::active_matrix();
  const compat::MachineQuery query = compat::query_from_snapshot(context.snapshot, matrix);
  if (!query.driver && !query.driver_cuda) {
    return {skip_result(k_info, "the driver version is not known")};
  }
  const std::string line = compat::one_line(compat::what_runs(matrix, query));
  return {make_result(k_info, line, {make_finding(codes::k_compat_what_runs, std::nullopt, line)})};
}
} // namespace

CheckDef compat_what_runs_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
