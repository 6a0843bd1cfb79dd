// Rule 7: a forward-compatibility libcuda (cuda-compat-<major>-<minor>) on this GPU and branch.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "compat/lookup.hpp"
#include "compat/machine.hpp"
#include "compat/rules.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::compat {

namespace {

bool contains(const std::vector<int>& list, int value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

/// The CUDA version the compat libcuda serves: what it reported, else its file name
/// ("libcuda.so.615.31" -> driver 615.31 -> the newest CUDA that driver serves).
std::optional<Version> package_cuda(const Matrix& matrix, const MachineFacts& facts) {
  if (facts.driver_cuda) {
    return facts.driver_cuda;
  }
  // "libcuda.so.615.31": a plain scan, no regex (the name comes from the machine).
  constexpr std::string_view k_prefix = "libcuda.so.";
  const std::string& name = *facts.compat_libcuda;
  const size_t at = name.find(k_prefix);
  if (at != std::string::npos) {
    const size_t begin = at + k_prefix.size();
    size_t end = begin;
    while (end < name.size() && end - begin < 32 &&
           ((name[end] >= '0' && name[end] <= '9') || name[end] == '.')) {
      ++end;
    }
    std::string digits = name.substr(begin, end - begin);
    while (!digits.empty() && digits.back() == '.') {
      digits.pop_back();
    }
    std::optional<Version> driver =
        digits.find('.') != std::string::npos ? Version::parse(digits) : std::nullopt;
    if (driver) {
      if (const CudaRelease* r = newest_release_for_driver(matrix, *driver)) {
        return r->version;
      }
    }
  }
  return std::nullopt;
}

std::string branch_list(const std::vector<int>& branches) {
  std::vector<std::string> names;
  for (int b : branches) {
    names.push_back(fmt::format("R{}", b));
  }
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

} // namespace

RuleOutcome forward_compat_rule(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  RuleOutcome out;
  if (!facts.compat_libcuda) {
    out.skip_reason = "no forward-compatibility libcuda is in use";
    return out;
  }
  if (!facts.driver) {
    out.skip_reason = "the kernel driver version is not known";
    return out;
  }
  const ForwardCompat& fc = matrix.forward_compat;
  const std::string& libcuda = *facts.compat_libcuda;
  const int branch = facts.driver->major_number();
  const std::optional<Version> cuda = package_cuda(matrix, facts);
  const std::string cuda_text = cuda ? cuda->str() : std::string("(unknown)");
  const size_t before = out.findings.size();

  for (const MachineGpu& gpu : facts.gpus) {
    const std::string gpu_name = fmt::format("GPU {}: {}", gpu.index, gpu.name);
    const std::string gpu_class = gpu.product != nullptr ? gpu.product->gpu_class : "unknown";
    if (contains(fc.supported_gpu_classes, gpu_class)) {
      continue;
    }
    if (gpu.product == nullptr || contains(fc.conditional_gpu_classes, gpu_class)) {
      out.findings.push_back(make_finding(codes::k_compat_forward_compat_conditional, gpu.index,
                                          libcuda, gpu_name, gpu_class));
      continue;
    }
    out.findings.push_back(make_finding(codes::k_compat_forward_compat_unsupported_gpu, gpu.index,
                                        libcuda, gpu_name, gpu_class, cuda_text));
  }

  const CompatPackage* package = nullptr;
  for (const CompatPackage& p : fc.packages) {
    if (cuda && p.cuda == *cuda) {
      package = &p;
    }
  }
  if (!contains(fc.base_branches, branch)) {
    out.findings.push_back(make_finding(
        codes::k_compat_forward_compat_wrong_branch, std::nullopt, libcuda, cuda_text, branch,
        fmt::format("R{} is not a supported base branch (end of life, or a New Feature Branch)",
                    branch),
        branch_list(package != nullptr ? package->compatible_branches : fc.base_branches)));
  } else if (package == nullptr) {
    out.findings.push_back(
        make_finding(codes::k_compat_cuda_unknown, std::nullopt,
                     fmt::format("the forward-compatibility libcuda ({})", libcuda), cuda_text,
                     matrix.matrix_version, *facts.driver_text));
  } else if (contains(package->not_needed_branches, branch)) {
    out.findings.push_back(make_finding(codes::k_compat_forward_compat_not_needed, std::nullopt,
                                        libcuda, cuda_text, branch, package->package));
  } else if (!contains(package->compatible_branches, branch)) {
    out.findings.push_back(make_finding(
        codes::k_compat_forward_compat_wrong_branch, std::nullopt, libcuda, cuda_text, branch,
        fmt::format("NVIDIA ships no {} for the R{} base branch", package->package, branch),
        branch_list(package->compatible_branches)));
  }

  if (out.findings.size() == before) {
    out.findings.push_back(
        make_finding(codes::k_compat_forward_compat_ok, std::nullopt, libcuda, cuda_text, branch));
  }
  out.summary = fmt::format("forward-compatibility libcuda for CUDA {} on kernel driver {}",
                            cuda_text, *facts.driver_text);
  return out;
}

} // namespace gpucheck::compat
