// Rules 3, 4 and 5: each GPU's architecture against the driver branch, the CUDA builds and cuDNN.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "compat/lookup.hpp"
#include "compat/machine.hpp"
#include "compat/rules.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::compat {

namespace {

std::string gpu_text(const MachineGpu& gpu) {
  return fmt::format("GPU {}: {}", gpu.index, gpu.name.empty() ? "unnamed" : gpu.name);
}

std::string arch_of(const Matrix& matrix, const MachineGpu& gpu) {
  if (const ComputeCapability* info = cc_info(matrix, *gpu.cc)) {
    return info->arch;
  }
  return gpu.product != nullptr ? gpu.product->arch : "unknown architecture";
}

/// GPUs with a compute capability; an info finding for each one the matrix cannot place.
std::vector<const MachineGpu*> placed_gpus(const Matrix& matrix, const MachineFacts& facts,
                                           std::vector<Finding>& findings) {
  std::vector<const MachineGpu*> out;
  for (const MachineGpu& gpu : facts.gpus) {
    if (gpu.cc && (cc_info(matrix, *gpu.cc) != nullptr || gpu.product != nullptr)) {
      out.push_back(&gpu);
      continue;
    }
    if (gpu.cc) {
      out.push_back(&gpu);
    }
    findings.push_back(
        make_finding(codes::k_compat_gpu_unknown, gpu.index, gpu_text(gpu),
                     gpu.cc ? sm_name(*gpu.cc) : std::string("unknown compute capability"),
                     gpu.pci_device_id.value_or("unknown"), matrix.matrix_version));
  }
  return out;
}

/// The first version in the data at which a compute capability became a target.
std::string first_cuda_text(const Matrix& matrix, const Version& cc) {
  if (const ComputeCapability* info = cc_info(matrix, cc)) {
    return info->first_cuda.str();
  }
  return "a newer release";
}

void judge_arch_against_build(const Matrix& matrix, const MachineGpu& gpu, const CudaBuild& build,
                              std::vector<Finding>& findings) {
  const CudaTargets* targets = targets_for(matrix, build.cuda);
  if (targets == nullptr) {
    return; // the build's CUDA version is unknown: the driver rules already say so
  }
  const Version& cc = *gpu.cc;
  const std::string arch = arch_of(matrix, gpu);
  const bool unverified = targets->provenance.unverified();
  if (covered_by_sass(targets->sm, cc)) {
    const bool deprecated =
        std::any_of(targets->deprecated.begin(), targets->deprecated.end(), [&](const Version& d) {
          return d.major_number() == cc.major_number() && d.minor_number() <= cc.minor_number();
        });
    if (deprecated) {
      const ComputeCapability* info = cc_info(matrix, cc);
      const std::string last = info != nullptr && info->last_cuda_major
                                   ? fmt::format("{}.x", *info->last_cuda_major)
                                   : std::string("not yet known");
      findings.push_back(make_finding(codes::k_compat_gpu_arch_deprecated, gpu.index, build.what,
                                      gpu_text(gpu), sm_name(cc), arch, targets->provenance.note,
                                      last));
    }
    return;
  }
  const Version& oldest = *std::min_element(targets->sm.begin(), targets->sm.end());
  if (cc < oldest) {
    const ComputeCapability* info = cc_info(matrix, cc);
    const std::string last = info != nullptr && info->last_cuda_major
                                 ? std::to_string(*info->last_cuda_major)
                                 : std::to_string(build.cuda.major_number() - 1);
    findings.push_back(make_finding(codes::k_compat_gpu_arch_removed, gpu.index, build.what,
                                    gpu_text(gpu), sm_name(cc), arch, last,
                                    unconfirmed_note(unverified)));
    return;
  }
  findings.push_back(make_finding(codes::k_compat_gpu_arch_newer_than_toolkit, gpu.index,
                                  build.what, gpu_text(gpu), sm_name(cc),
                                  first_cuda_text(matrix, cc), unconfirmed_note(unverified)));
}

/// A cuDNN entry that covers `version` and carries architecture data, or nullptr.
const CudnnRelease* cudnn_with_arch_data(const Matrix& matrix, const Version& version) {
  for (const CudnnRelease& r : matrix.cudnn) {
    if (in_range(version, r.from, r.to) && (r.cc_min || r.cc_max) && !r.provenance.unverified()) {
      return &r;
    }
  }
  return nullptr;
}

bool cudnn_supports(const CudnnRelease& r, const Version& cc) {
  if (r.cc_min && cc < *r.cc_min) {
    return false;
  }
  return !r.cc_max || cc.major_number() <= r.cc_max->major_number();
}

/// The newest cuDNN in the data that supports a compute capability, as text.
std::string newest_cudnn_for(const Matrix& matrix, const Version& cc) {
  const CudnnRelease* best = nullptr;
  for (const CudnnRelease& r : matrix.cudnn) {
    if ((r.cc_min || r.cc_max) && !r.provenance.unverified() && cudnn_supports(r, cc) &&
        (best == nullptr || best->to < r.to)) {
      best = &r;
    }
  }
  return best == nullptr ? std::string() : fmt::format(" (for example cuDNN {})", best->to.str());
}

void judge_cudnn_unknown(const Matrix& matrix, const InstalledCudnn& cudnn, const MachineGpu& gpu,
                         std::vector<Finding>& findings) {
  const Version& v = *cudnn.value;
  const CudnnRelease* older = nullptr;
  const CudnnRelease* newer = nullptr;
  for (const CudnnRelease& r : matrix.cudnn) {
    if (!(r.cc_min || r.cc_max) || r.provenance.unverified()) {
      continue;
    }
    if (v.truncated(r.to.parts().size()) > r.to && (older == nullptr || older->to < r.to)) {
      older = &r;
    }
    if (v.truncated(r.from.parts().size()) < r.from && (newer == nullptr || r.from < newer->from)) {
      newer = &r;
    }
  }
  const Version& cc = *gpu.cc;
  std::vector<std::string> parts;
  bool any_no = false;
  for (const CudnnRelease* r : {older, newer}) {
    if (r != nullptr) {
      const bool yes = cudnn_supports(*r, cc);
      any_no = any_no || !yes;
      parts.push_back(fmt::format(
          "cuDNN {} {} it", r->to == r->from ? r->to.str() : r->from.str() + "-" + r->to.str(),
          yes ? "supports" : "does not support"));
    }
  }
  const std::string evidence = parts.empty() ? std::string("no release around it has data")
                                             : fmt::format("{}", fmt::join(parts, ", "));
  findings.push_back(make_finding_as(any_no || parts.empty() ? Severity::warn : Severity::info,
                                     codes::k_compat_cudnn_arch_unconfirmed, gpu.index,
                                     cudnn.version, gpu_text(gpu), sm_name(cc), evidence));
}

} // namespace

RuleOutcome gpu_driver_rule(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  RuleOutcome out;
  if (!facts.driver) {
    out.skip_reason = "the driver version is not known";
    return out;
  }
  if (facts.gpus.empty()) {
    out.skip_reason = "no GPU found";
    return out;
  }
  int ok = 0;
  const std::vector<const MachineGpu*> gpus = placed_gpus(matrix, facts, out.findings);
  for (const MachineGpu* gpu : gpus) {
    const ComputeCapability* info = cc_info(matrix, *gpu->cc);
    if (info != nullptr && info->last_driver_branch &&
        facts.driver->major_number() > *info->last_driver_branch) {
      out.findings.push_back(make_finding(codes::k_compat_gpu_dropped_by_driver, gpu->index,
                                          gpu_text(*gpu), sm_name(*gpu->cc), info->arch,
                                          *facts.driver_text, *info->last_driver_branch,
                                          unconfirmed_note(info->provenance.unverified())));
    } else {
      ++ok;
    }
  }
  out.summary = fmt::format("driver branch R{} supports {} of {} GPUs",
                            facts.driver->major_number(), ok, facts.gpus.size());
  return out;
}

RuleOutcome gpu_toolkit_rule(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  RuleOutcome out;
  std::vector<CudaBuild> builds = facts.runtimes;
  if (facts.nvcc) {
    builds.push_back({fmt::format("nvcc {}", *facts.nvcc_text), *facts.nvcc});
  }
  if (builds.empty()) {
    out.skip_reason = "no CUDA runtime or toolkit found";
    return out;
  }
  if (facts.gpus.empty()) {
    out.skip_reason = "no GPU found";
    return out;
  }
  for (const MachineGpu* gpu : placed_gpus(matrix, facts, out.findings)) {
    for (const CudaBuild& build : builds) {
      judge_arch_against_build(matrix, *gpu, build, out.findings);
    }
  }
  out.summary = fmt::format("{} GPUs against {} CUDA builds", facts.gpus.size(), builds.size());
  return out;
}

RuleOutcome gpu_cudnn_rule(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  RuleOutcome out;
  if (facts.cudnn.empty()) {
    out.skip_reason = "no cuDNN found";
    return out;
  }
  if (facts.gpus.empty()) {
    out.skip_reason = "no GPU found";
    return out;
  }
  for (const MachineGpu* gpu : placed_gpus(matrix, facts, out.findings)) {
    for (const InstalledCudnn& cudnn : facts.cudnn) {
      if (!cudnn.value) {
        continue;
      }
      const CudnnRelease* release = cudnn_with_arch_data(matrix, *cudnn.value);
      if (release == nullptr) {
        judge_cudnn_unknown(matrix, cudnn, *gpu, out.findings);
        continue;
      }
      // A build for the CUDA this cuDNN was made for may narrow the range (e.g. 9.10.2's
      // builds before CUDA 12.8 stop at Hopper).
      std::optional<Version> cc_min = release->cc_min;
      std::optional<Version> cc_max = release->cc_max;
      for (const CudnnBuild& build : release->builds) {
        if (cudnn.built_for && *cudnn.built_for >= build.cuda_from &&
            *cudnn.built_for <= build.cuda_to) {
          cc_min = build.cc_min ? build.cc_min : cc_min;
          cc_max = build.cc_max ? build.cc_max : cc_max;
        }
      }
      const Version& cc = *gpu->cc;
      const bool too_old = cc_min && cc < *cc_min;
      const bool too_new = cc_max && cc.major_number() > cc_max->major_number();
      const std::string min_text = cc_min ? cc_min->str() : "?";
      const std::string max_text = cc_max ? cc_max->str() : "the newest";
      if (too_old || (too_new && cudnn.value->major_number() < 9)) {
        out.findings.push_back(make_finding(codes::k_compat_cudnn_arch_unsupported, gpu->index,
                                            cudnn.version, gpu_text(*gpu), sm_name(cc), min_text,
                                            max_text, unconfirmed_note(false),
                                            newest_cudnn_for(matrix, cc)));
      } else if (too_new) {
        out.findings.push_back(make_finding(codes::k_compat_cudnn_arch_newer, gpu->index,
                                            cudnn.version, gpu_text(*gpu), sm_name(cc), max_text));
      }
    }
  }
  out.summary =
      fmt::format("{} GPUs against {} cuDNN installs", facts.gpus.size(), facts.cudnn.size());
  return out;
}

} // namespace gpucheck::compat
