#include "compat/what_runs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "compat/lookup.hpp"
#include "compat/machine.hpp"

namespace gpucheck::compat {

std::string_view to_string(WheelFit fit) {
  switch (fit) {
  case WheelFit::fits:
    return "fits";
  case WheelFit::fits_ptx_jit:
    return "fits_ptx_jit";
  case WheelFit::driver_too_old:
    return "driver_too_old";
  case WheelFit::gpu_not_covered:
    return "gpu_not_covered";
  case WheelFit::archs_unknown:
    return "archs_unknown";
  case WheelFit::driver_unknown:
    return "driver_unknown";
  }
  return "driver_unknown";
}

MachineQuery query_from_snapshot(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  MachineQuery query;
  query.driver_text = facts.driver_text;
  query.driver = facts.driver;
  query.driver_cuda = facts.driver_cuda;
  for (const MachineGpu& gpu : facts.gpus) {
    if (gpu.cc) {
      query.gpu_ccs.push_back(*gpu.cc);
      query.gpu_names.push_back(gpu.name);
    }
  }
  return query;
}

namespace {

std::string arch_list(const std::vector<Version>& archs) {
  std::vector<std::string> names;
  for (const Version& cc : archs) {
    names.push_back(sm_name(cc));
  }
  return fmt::format("{}", fmt::join(names, " "));
}

bool driver_runs(const Matrix& matrix, const MachineQuery& q, const Version& cuda, bool& mvc,
                 bool& unconfirmed) {
  const DriverVerdict v = judge_driver(matrix, q.driver, q.driver_cuda, cuda);
  mvc = v.fit == DriverFit::minor_version;
  unconfirmed = v.unconfirmed;
  return v.fit == DriverFit::native || v.fit == DriverFit::minor_version;
}

std::string range_text(const Version& from, const Version& to) {
  return from == to ? from.str() : fmt::format("{}-{}", from.str(), to.str());
}

/// Whether no GPU of the query was dropped by this CUDA major (Volta by CUDA 13). A build of an
/// older CUDA than the GPU's first may still run it through PTX or the wheel's own newer
/// libraries: the builds' own architecture data judge that.
bool gpus_run_cuda(const Matrix& matrix, const MachineQuery& q, const Version& cuda) {
  return std::all_of(q.gpu_ccs.begin(), q.gpu_ccs.end(), [&](const Version& cc) {
    const ComputeCapability* info = cc_info(matrix, cc);
    return info == nullptr || !info->last_cuda_major ||
           cuda.major_number() <= *info->last_cuda_major;
  });
}

/// The newest CUDA major every GPU still supports, or nullopt when none dropped out.
std::optional<int> newest_cuda_major_for_gpus(const Matrix& matrix, const MachineQuery& q) {
  std::optional<int> cap;
  for (const Version& cc : q.gpu_ccs) {
    if (const ComputeCapability* info = cc_info(matrix, cc); info && info->last_cuda_major) {
      cap = cap ? std::min(*cap, *info->last_cuda_major) : *info->last_cuda_major;
    }
  }
  return cap;
}

/// Notes for GPUs this driver cannot drive: a branch newer than the architecture's last one
/// (R580 for Volta), or a driver older than the first CUDA release for it (R470 and Hopper).
std::vector<std::string> gpus_the_driver_cannot_run(const Matrix& matrix, const MachineQuery& q,
                                                    const std::optional<Version>& driver_cuda) {
  std::vector<std::string> notes;
  for (const Version& cc : q.gpu_ccs) {
    const ComputeCapability* info = cc_info(matrix, cc);
    if (info == nullptr) {
      continue;
    }
    if (q.driver && info->last_driver_branch &&
        q.driver->major_number() > *info->last_driver_branch) {
      notes.push_back(fmt::format(
          "driver {} does not support {} ({}): R{} is the last driver branch for it, so nothing "
          "runs on it with this driver; install an R{} driver",
          q.driver_text.value_or(q.driver->str()), sm_name(cc), info->arch,
          *info->last_driver_branch, *info->last_driver_branch));
    } else if (driver_cuda && driver_cuda->truncated(2) < info->first_cuda.truncated(2)) {
      notes.push_back(fmt::format(
          "driver {} (CUDA {}) is older than {} ({}): it needs a driver for CUDA {} or newer, "
          "so nothing runs on it with this driver",
          q.driver_text.value_or("of this machine"), driver_cuda->str(), sm_name(cc), info->arch,
          info->first_cuda.str()));
    }
  }
  return notes;
}

} // namespace

WheelVerdict fit_pytorch_wheel(const Matrix& matrix, const PytorchWheel& wheel,
                               const MachineQuery& query) {
  WheelVerdict out;
  if (!query.driver && !query.driver_cuda) {
    out.fit = WheelFit::driver_unknown;
    out.reason = "the driver is not known";
    return out;
  }
  const DriverVerdict v = judge_driver(matrix, query.driver, query.driver_cuda, wheel.cuda);
  if (v.fit == DriverFit::unknown) {
    out.fit = WheelFit::driver_unknown;
    out.reason = fmt::format("CUDA {} on this driver is unknown to the matrix", wheel.cuda.str());
    return out;
  }
  if (v.fit == DriverFit::too_old) {
    out.fit = WheelFit::driver_too_old;
    out.reason =
        fmt::format("{} needs driver >= {}", wheel.wheel, needed_driver_text(v, wheel.cuda));
    return out;
  }
  out.minor_version = v.fit == DriverFit::minor_version;
  if (!wheel.archs) {
    out.fit = WheelFit::archs_unknown;
    out.reason = fmt::format("the architectures of PyTorch {} {} are not in the matrix",
                             wheel.version.str(), wheel.wheel);
    return out;
  }
  out.fit = WheelFit::fits;
  for (const Version& cc : query.gpu_ccs) {
    if (covered_by_sass(*wheel.archs, cc)) {
      continue;
    }
    if (wheel.ptx && *wheel.ptx <= cc) {
      out.fit = WheelFit::fits_ptx_jit;
      out.reason =
          fmt::format("{} runs only the wheel's PTX for {}", sm_name(cc), sm_name(*wheel.ptx));
      continue;
    }
    out.fit = WheelFit::gpu_not_covered;
    out.reason = fmt::format("{} is not among PyTorch {} {}'s architectures ({}){}", sm_name(cc),
                             wheel.version.str(), wheel.wheel, arch_list(*wheel.archs),
                             wheel.ptx ? fmt::format(", PTX {}", sm_name(*wheel.ptx)) : "");
    return out;
  }
  return out;
}

namespace {
/// The newest CUDA the driver runs (and with minor version compatibility), or the note that the
/// matrix does not know the driver; returns the driver's own CUDA as the rest reads it.
std::optional<Version> newest_cuda(const Matrix& matrix, const MachineQuery& q, WhatRuns& out) {
  const int newest_branch = newest_known_branch(matrix);
  out.driver_unknown_to_matrix = q.driver && q.driver->major_number() > newest_branch;
  std::optional<Version> driver_cuda = q.driver_cuda;
  if (!driver_cuda && q.driver && !out.driver_unknown_to_matrix) {
    if (const CudaRelease* r = newest_release_for_driver(matrix, *q.driver)) {
      driver_cuda = r->version;
    }
  }
  if (out.driver_unknown_to_matrix) {
    out.notes.push_back(fmt::format(
        "driver {} is unknown to this matrix (newest known branch R{}); assuming it runs every "
        "CUDA release the matrix knows",
        *q.driver_text, newest_branch));
  }
  if (driver_cuda) {
    out.newest_cuda = driver_cuda->str();
    if (const MinorVersionCompat* mvc = mvc_for(matrix, driver_cuda->major_number())) {
      Version newest_in_major;
      for (const CudaRelease& r : matrix.cuda_releases) {
        if (!r.prerelease && r.version.major_number() == mvc->major &&
            newest_in_major < r.version) {
          newest_in_major = r.version;
        }
      }
      bool mvc_used = false;
      bool unconfirmed = false;
      if (*driver_cuda < newest_in_major &&
          driver_runs(matrix, q, newest_in_major, mvc_used, unconfirmed)) {
        out.newest_cuda_mvc = newest_in_major.str();
      }
    }
  } else if (out.driver_unknown_to_matrix) {
    out.newest_cuda = fmt::format("{} or newer", newest_known_cuda(matrix).str());
  }
  return driver_cuda;
}

/// GPU against CUDA: a major that dropped a GPU's architecture runs nothing on it, so the newest
/// CUDA is the newest release of the last major that has it.
void cap_cuda_for_gpus(const Matrix& matrix, const MachineQuery& q,
                       const std::optional<Version>& driver_cuda, WhatRuns& out) {
  const std::optional<int> cap = newest_cuda_major_for_gpus(matrix, q);
  if (!cap || !driver_cuda || driver_cuda->major_number() <= *cap) {
    return;
  }
  std::optional<Version> newest;
  for (const CudaRelease& r : matrix.cuda_releases) {
    if (!r.prerelease && r.version.major_number() == *cap && (!newest || *newest < r.version)) {
      newest = r.version;
    }
  }
  out.newest_cuda_mvc.reset();
  if (newest) {
    out.notes.push_back(fmt::format(
        "CUDA {} dropped a GPU here (the newest CUDA major for it is {}): the newest CUDA it "
        "runs is {}",
        driver_cuda->major_number(), *cap, newest->str()));
    out.newest_cuda = newest->str();
  }
}

/// PyTorch: the newest wheel (release, then CUDA) that fits, and the newest that fits without
/// minor version compatibility when that is another.
void pick_pytorch(const Matrix& matrix, const MachineQuery& q, WhatRuns& out) {
  std::vector<const PytorchWheel*> wheels;
  for (const PytorchWheel& w : matrix.pytorch) {
    wheels.push_back(&w);
  }
  std::sort(wheels.begin(), wheels.end(), [](const PytorchWheel* a, const PytorchWheel* b) {
    return a->version != b->version ? a->version > b->version : a->cuda > b->cuda;
  });
  for (const PytorchWheel* w : wheels) {
    const WheelVerdict v = fit_pytorch_wheel(matrix, *w, q);
    if (v.fit != WheelFit::fits && v.fit != WheelFit::fits_ptx_jit) {
      continue;
    }
    Pick pick{fmt::format("PyTorch {} {}", w->version.str(), w->wheel),
              w->cuda.str(),
              v.minor_version,
              v.fit == WheelFit::fits_ptx_jit,
              w->provenance.unverified(),
              fmt::format("bundles cuDNN {}", w->cudnn)};
    if (!out.pytorch) {
      out.pytorch = pick;
    }
    if (!v.minor_version) {
      if (out.pytorch->name != pick.name) {
        out.pytorch_native = pick;
      }
      break;
    }
  }
}

/// TensorFlow: the newest tested configuration whose CUDA the driver runs.
void pick_tensorflow(const Matrix& matrix, const MachineQuery& q, WhatRuns& out) {
  std::optional<Version> newest_tf;
  for (const TensorflowBuild& tf : matrix.tensorflow) {
    bool mvc = false;
    bool unconfirmed = false;
    const std::optional<Version> version = Version::parse(tf.version);
    if (!version || !driver_runs(matrix, q, tf.cuda, mvc, unconfirmed) ||
        !gpus_run_cuda(matrix, q, tf.cuda)) {
      continue;
    }
    const bool gpus_ok = std::all_of(q.gpu_ccs.begin(), q.gpu_ccs.end(), [&](const Version& cc) {
      return !matrix.tensorflow_gpu_cc_min || cc >= *matrix.tensorflow_gpu_cc_min;
    });
    if (gpus_ok && (!newest_tf || *newest_tf < *version)) {
      newest_tf = version;
      out.tensorflow =
          Pick{fmt::format("TensorFlow {}", tf.version),
               tf.cuda.str(),
               mvc,
               false,
               unconfirmed || tf.provenance.unverified(),
               fmt::format("tested with CUDA {} and cuDNN {}", tf.cuda.str(), tf.cudnn)};
    }
  }
}

/// JAX: the first wheel in the data (newest CUDA first) that fits.
void pick_jax(const Matrix& matrix, const MachineQuery& q, WhatRuns& out) {
  for (const JaxWheel& jax : matrix.jax) {
    const bool driver_ok = q.driver ? *q.driver >= jax.linux_min_driver.value
                                    : (q.driver_cuda && *q.driver_cuda >= jax.cuda_min);
    const bool gpus_ok = std::all_of(q.gpu_ccs.begin(), q.gpu_ccs.end(),
                                     [&](const Version& cc) { return cc >= jax.cc_min; });
    if (driver_ok && gpus_ok && gpus_run_cuda(matrix, q, jax.built_with_cuda)) {
      out.jax = Pick{jax.wheel,
                     jax.built_with_cuda.str(),
                     false,
                     false,
                     jax.provenance.unverified(),
                     fmt::format("needs driver >= {} and cuDNN >= {}", jax.linux_min_driver.text,
                                 jax.cudnn_min)};
      return;
    }
  }
}

/// cuDNN: releases with a build this driver runs and every GPU supports.
void list_cudnn(const Matrix& matrix, const MachineQuery& q, WhatRuns& out) {
  for (const CudnnRelease& r : matrix.cudnn) {
    if (!(r.cc_min || r.cc_max) || r.provenance.unverified()) {
      continue;
    }
    std::vector<std::string> builds;
    for (const CudnnBuild& b : r.builds) {
      bool mvc = false;
      bool unconfirmed = false;
      const bool driver_ok =
          driver_runs(matrix, q, b.cuda_from, mvc, unconfirmed) &&
          (!b.linux_min_driver || !q.driver || *q.driver >= b.linux_min_driver->value);
      const std::optional<Version> cc_min = b.cc_min ? b.cc_min : r.cc_min;
      const std::optional<Version> cc_max = b.cc_max ? b.cc_max : r.cc_max;
      const bool gpus_ok = std::all_of(q.gpu_ccs.begin(), q.gpu_ccs.end(), [&](const Version& cc) {
        return (!cc_min || cc >= *cc_min) &&
               (!cc_max || cc.major_number() <= cc_max->major_number());
      });
      if (driver_ok && gpus_ok && gpus_run_cuda(matrix, q, b.cuda_from)) {
        builds.push_back(fmt::format("CUDA {}", range_text(b.cuda_from, b.cuda_to)));
      }
    }
    if (!builds.empty()) {
      out.cudnn.push_back(
          fmt::format("{} ({} builds)", range_text(r.from, r.to), fmt::join(builds, ", ")));
    }
  }
}
} // namespace

WhatRuns what_runs(const Matrix& matrix, const MachineQuery& q) {
  WhatRuns out;
  out.matrix_version = matrix.matrix_version;
  out.driver_text = q.driver_text;
  for (size_t i = 0; i < q.gpu_ccs.size(); ++i) {
    const std::string name = i < q.gpu_names.size() ? q.gpu_names[i] : "";
    out.gpus.push_back(name.empty() ? sm_name(q.gpu_ccs[i])
                                    : fmt::format("{} ({})", sm_name(q.gpu_ccs[i]), name));
  }
  const std::optional<Version> driver_cuda = newest_cuda(matrix, q, out);
  // GPU against driver: a GPU this driver cannot drive runs nothing at all.
  if (std::vector<std::string> cannot = gpus_the_driver_cannot_run(matrix, q, driver_cuda);
      !cannot.empty()) {
    out.notes.insert(out.notes.end(), cannot.begin(), cannot.end());
    out.newest_cuda.reset();
    out.newest_cuda_mvc.reset();
    return out;
  }
  cap_cuda_for_gpus(matrix, q, driver_cuda, out);
  pick_pytorch(matrix, q, out);
  pick_tensorflow(matrix, q, out);
  pick_jax(matrix, q, out);
  list_cudnn(matrix, q, out);
  return out;
}

namespace {
nlohmann::json pick_json(const std::optional<Pick>& pick) {
  if (!pick) {
    return nullptr;
  }
  return {{"name", pick->name},
          {"cuda", pick->cuda},
          {"minor_version_compatibility", pick->minor_version},
          {"ptx_jit", pick->ptx_jit},
          {"unconfirmed", pick->unconfirmed},
          {"note", pick->note}};
}

std::string pick_text(const std::optional<Pick>& pick) {
  if (!pick) {
    return "none in this matrix";
  }
  std::string text = pick->name;
  if (pick->minor_version) {
    text += " (through minor-version compatibility)";
  }
  if (pick->ptx_jit) {
    text += " (PTX JIT only)";
  }
  if (pick->unconfirmed) {
    text += " (unconfirmed)";
  }
  return text;
}

template <typename T> nlohmann::json opt_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
} // namespace

nlohmann::json to_json(const WhatRuns& what) {
  return {{"matrix_version", what.matrix_version},
          {"driver", opt_json(what.driver_text)},
          {"driver_unknown_to_matrix", what.driver_unknown_to_matrix},
          {"newest_cuda", opt_json(what.newest_cuda)},
          {"newest_cuda_minor_version_compatibility", opt_json(what.newest_cuda_mvc)},
          {"gpus", what.gpus},
          {"pytorch", pick_json(what.pytorch)},
          {"pytorch_without_minor_version_compatibility", pick_json(what.pytorch_native)},
          {"tensorflow", pick_json(what.tensorflow)},
          {"jax", pick_json(what.jax)},
          {"cudnn", what.cudnn},
          {"notes", what.notes}};
}

std::string to_text(const WhatRuns& what) {
  std::string out;
  out += fmt::format("Compatibility matrix {}\n", what.matrix_version);
  out += fmt::format("Driver:      {}\n", what.driver_text.value_or("unknown"));
  out += fmt::format("GPUs:        {}\n", what.gpus.empty()
                                              ? std::string("none given")
                                              : fmt::format("{}", fmt::join(what.gpus, ", ")));
  out += fmt::format(
      "CUDA:        up to {}{}\n", what.newest_cuda.value_or("unknown"),
      what.newest_cuda_mvc
          ? fmt::format("; up to {} through minor-version compatibility", *what.newest_cuda_mvc)
          : "");
  out += fmt::format("PyTorch:     {}\n", pick_text(what.pytorch));
  if (what.pytorch_native) {
    out += fmt::format("             {} without minor-version compatibility\n",
                       pick_text(what.pytorch_native));
  }
  out += fmt::format("TensorFlow:  {}\n", pick_text(what.tensorflow));
  out += fmt::format("JAX:         {}\n", pick_text(what.jax));
  // The newest few cuDNN releases; --json lists them all.
  constexpr size_t k_cudnn_shown = 3;
  std::string cudnn = "none in this matrix";
  if (!what.cudnn.empty()) {
    const size_t first = what.cudnn.size() > k_cudnn_shown ? what.cudnn.size() - k_cudnn_shown : 0;
    std::vector<std::string> newest(
        what.cudnn.rbegin(), what.cudnn.rbegin() + static_cast<long>(what.cudnn.size() - first));
    cudnn = fmt::format("{}", fmt::join(newest, "; "));
    if (first > 0) {
      cudnn += fmt::format("; and {} older releases", first);
    }
  }
  out += fmt::format("cuDNN:       {}\n", cudnn);
  for (const std::string& note : what.notes) {
    out += fmt::format("Note:        {}\n", note);
  }
  return out;
}

std::string one_line(const WhatRuns& what) {
  return fmt::format("CUDA up to {}{}; PyTorch: {}; TensorFlow: {}; JAX: {}",
                     what.newest_cuda.value_or("unknown"),
                     what.newest_cuda_mvc ? fmt::format(" ({} through minor-version compatibility)",
                                                        *what.newest_cuda_mvc)
                                          : "",
                     pick_text(what.pytorch), pick_text(what.tensorflow), pick_text(what.jax));
}

} // namespace gpucheck::compat
