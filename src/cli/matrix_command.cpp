#include "cli/matrix_command.hpp"
#include "cli/options.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "compat/lookup.hpp"
#include "render/json.hpp"

namespace gpucheck::cli {

namespace {
/// A GPU as people type it ("RTX 3090", "a100", "H100 SXM"): the matrix's patterns match the
/// names NVML reports ("NVIDIA GeForce RTX 3090"), so the typed name is also tried with the
/// prefixes NVML would add.
const compat::GpuProduct* gpu_as_typed(const compat::Matrix& matrix, const std::string& typed) {
  for (const char* prefix : {"", "NVIDIA ", "GeForce ", "NVIDIA GeForce "}) {
    if (const compat::GpuProduct* product = compat::gpu_by_name(matrix, prefix + typed)) {
      return product;
    }
  }
  return nullptr;
}
} // namespace

Expected<compat::MachineQuery> matrix_query(const MatrixOptions& options,
                                            const compat::Matrix& matrix,
                                            const std::optional<compat::MachineQuery>& probed) {
  compat::MachineQuery query;
  if (options.driver) {
    const std::optional<Version> driver = Version::parse(*options.driver);
    if (!driver || driver->major_number() < 100 || driver->major_number() > 999 ||
        driver->parts().size() > 3) {
      return make_error(fmt::format(
          "--driver '{}' is not an NVIDIA driver version (e.g. 535.104.05)", *options.driver));
    }
    query.driver_text = *options.driver;
    query.driver = driver;
  } else if (probed) {
    query.driver_text = probed->driver_text;
    query.driver = probed->driver;
    query.driver_cuda = probed->driver_cuda;
  }
  const std::vector<std::string> gpus = split_commas(options.gpus);
  for (const std::string& gpu : gpus) {
    if (const std::optional<Version> cc = parse_cc(gpu);
        cc && cc->major_number() >= 1 && cc->major_number() <= 20) {
      query.gpu_ccs.push_back(*cc);
      query.gpu_names.emplace_back();
    } else if (const compat::GpuProduct* product = gpu_as_typed(matrix, gpu)) {
      query.gpu_ccs.push_back(product->cc);
      query.gpu_names.push_back(product->product);
    } else {
      return make_error(fmt::format(
          "--gpu '{}' is neither a compute capability (sm_86, 8.6) nor a GPU the matrix knows",
          gpu.size() > 80 ? gpu.substr(0, 80) + "..." : gpu));
    }
  }
  if (gpus.empty() && probed) {
    query.gpu_ccs = probed->gpu_ccs;
    query.gpu_names = probed->gpu_names;
  }
  return query;
}

std::string render_matrix(const compat::Matrix& matrix, const compat::MachineQuery& query,
                          bool json) {
  const compat::WhatRuns what = compat::what_runs(matrix, query);
  if (json) {
    return render::dump_valid_json(compat::to_json(what));
  }
  return compat::to_text(what);
}

Expected<std::string> activate_matrix_file(const std::string& path) {
  Expected<compat::Matrix> matrix = compat::load_matrix_file(path);
  if (!matrix) {
    return matrix.error();
  }
  std::string version = matrix->matrix_version;
  compat::use_matrix(std::move(matrix).value());
  return version;
}

} // namespace gpucheck::cli
