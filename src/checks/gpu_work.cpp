#include "checks/gpu_work.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <utility>

#include "checks/visible_devices.hpp"
#include "gpucheck/registry.hpp"
#include "platform/trace.hpp"
#include "probes/sysroot.hpp"

namespace gpucheck::checks {

namespace {
struct ModeOfCheck {
  std::string_view check_id;
  std::string_view mode;
};
// The order in which the gated work runs (docs/checks.md, "How the GPU checks are scheduled"):
// compute and streams on each GPU; then bandwidth, one GPU after the other, with nothing else
// released anywhere; then cuDNN's timed convolutions on each GPU. cuDNN's untimed preparation
// (its small verified cases) runs before its gate, beside the others.
constexpr std::array<ModeOfCheck, 4> k_modes{{{"gpu.compute", "gpu-compute"},
                                              {"gpu.streams", "gpu-streams"},
                                              {"gpu.bandwidth", "gpu-bandwidth"},
                                              {"gpu.cudnn", "gpu-cudnn"}}};
constexpr std::string_view k_exclusive_mode = "gpu-bandwidth";
constexpr std::string_view k_last_mode = "gpu-cudnn";
// Context order on one GPU: cuDNN first, since it prepares longest before its gate (its first
// use of each kernel family is slow); bandwidth last, so that no context is being built while
// it copies (a context creation slows device-local copies by a fifth).
constexpr std::array<std::string_view, 4> k_setup_order{"gpu-cudnn", "gpu-compute", "gpu-streams",
                                                        "gpu-bandwidth"};
} // namespace

std::vector<std::string> gpu_work_modes() {
  std::vector<std::string> modes;
  for (const ModeOfCheck& m : k_modes) {
    modes.emplace_back(m.mode);
  }
  return modes;
}

std::string gpu_work_mode_for(std::string_view check_id) {
  for (const ModeOfCheck& m : k_modes) {
    if (m.check_id == check_id) {
      return std::string(m.mode);
    }
  }
  return {};
}

std::vector<PlannedGpuJob> plan_gpu_jobs(const std::vector<std::string>& modes,
                                         const std::vector<int>& ordinals) {
  const auto selected = [&modes](std::string_view mode) {
    return std::find(modes.begin(), modes.end(), mode) != modes.end();
  };
  std::vector<PlannedGpuJob> jobs;
  // Each GPU on its own: compute, then streams. Every job waits for every job before it on its
  // GPU: a child that ends early (it failed in its setup) must not let the next one overtake a
  // job that still runs.
  std::vector<size_t> chain_jobs;
  for (const int ordinal : ordinals) {
    std::vector<size_t> earlier;
    for (const ModeOfCheck& m : k_modes) {
      if (m.mode == k_exclusive_mode || m.mode == k_last_mode || !selected(m.mode)) {
        continue;
      }
      jobs.push_back({std::string(m.mode), ordinal, earlier, {}});
      earlier.push_back(jobs.size() - 1);
      chain_jobs.push_back(jobs.size() - 1);
    }
  }
  // Bandwidth: one GPU after the other, once every job above is done.
  std::vector<size_t> exclusive_jobs;
  if (selected(k_exclusive_mode)) {
    std::vector<size_t> earlier = chain_jobs;
    for (const int ordinal : ordinals) {
      jobs.push_back({std::string(k_exclusive_mode), ordinal, earlier, {}, true});
      earlier.push_back(jobs.size() - 1);
      exclusive_jobs.push_back(jobs.size() - 1);
    }
  }
  // cuDNN's timed work: after its GPU's jobs and every bandwidth job.
  if (selected(k_last_mode)) {
    for (const int ordinal : ordinals) {
      std::vector<size_t> after;
      for (const size_t k : chain_jobs) {
        if (jobs[k].ordinal == ordinal) {
          after.push_back(k);
        }
      }
      after.insert(after.end(), exclusive_jobs.begin(), exclusive_jobs.end());
      PlannedGpuJob& job = jobs.emplace_back();
      job.mode = std::string(k_last_mode);
      job.ordinal = ordinal;
      job.release_after = std::move(after);
      job.after_exit = true;
      job.after_quiet_host = true;
    }
  }
  // A GPU builds one context at a time, in k_setup_order: each job sets up once the one before
  // it on the same GPU has its context, while that one prepares or works.
  std::map<int, size_t> last_on_gpu;
  for (const std::string_view mode : k_setup_order) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].mode != mode) {
        continue;
      }
      const auto it = last_on_gpu.find(jobs[i].ordinal);
      if (it != last_on_gpu.end()) {
        jobs[i].setup_after = {it->second};
      }
      last_on_gpu[jobs[i].ordinal] = i;
    }
  }
  // No context is built on any GPU while copies are timed: bandwidth waits for all of them.
  for (PlannedGpuJob& job : jobs) {
    if (job.mode == k_exclusive_mode) {
      for (size_t i = 0; i < jobs.size(); ++i) {
        job.after_contexts.push_back(i);
      }
    }
  }
  return jobs;
}

std::vector<int> expected_cuda_ordinals(const std::string& sysroot,
                                        const std::optional<std::string>& visible_devices) {
  const probes::Sysroot root(sysroot);
  size_t count = root.list("/proc/driver/nvidia/gpus").size();
  if (visible_devices) {
    count = std::min(count, parse_visible_devices(*visible_devices, {}, false).accepted_count());
  }
  std::vector<int> ordinals;
  for (size_t i = 0; i < count; ++i) {
    ordinals.push_back(static_cast<int>(i));
  }
  return ordinals;
}

std::unique_ptr<GpuWork> start_gpu_work(const Selection& selection, const std::string& sysroot,
                                        std::chrono::milliseconds timeout) {
  std::vector<std::string> modes;
  for (const CheckDef& check : all_checks()) {
    const std::string mode = gpu_work_mode_for(check.info.id);
    if (!mode.empty() && is_selected(check.info.id, selection)) {
      modes.push_back(mode);
    }
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::vector<int> ordinals = expected_cuda_ordinals(
      sysroot, visible != nullptr ? std::optional<std::string>(visible) : std::nullopt);
  if (modes.empty() || ordinals.empty()) {
    return nullptr;
  }
  return std::make_unique<GpuWork>(modes, ordinals, timeout);
}

GpuWork::GpuWork(const std::vector<std::string>& modes, const std::vector<int>& ordinals,
                 std::chrono::milliseconds timeout) {
  for (const PlannedGpuJob& job : plan_gpu_jobs(modes, ordinals)) {
    platform::ChildRequest request;
    request.mode = job.mode;
    request.args = {std::to_string(job.ordinal)};
    request.timeout = timeout;
    request.gated = true;
    request.release_after = job.release_after;
    request.setup_after = job.setup_after;
    request.release_after_exit = job.after_exit;
    request.release_after_contexts = job.after_contexts;
    request.release_after_quiet_host = job.after_quiet_host;
    m_group.start(std::move(request));
    m_jobs.push_back({job.mode, job.ordinal});
  }
  m_thread = std::thread([this] { m_outcomes = m_group.wait_all(); });
}

GpuWork::~GpuWork() {
  cancel();
  join();
}

void GpuWork::join() {
  std::call_once(m_joined, [this] {
    if (m_thread.joinable()) {
      m_thread.join();
    }
  });
}

void GpuWork::await_contexts(std::chrono::milliseconds limit) {
  std::vector<size_t> all(m_jobs.size());
  for (size_t i = 0; i < all.size(); ++i) {
    all[i] = i;
  }
  if (!m_group.await_progress(all, {}, limit)) {
    platform::trace(fmt::format("GPU work: not every context built within {} ms", limit.count()));
  }
}

void GpuWork::host_quiet() {
  m_group.host_quiet();
}

void GpuWork::cancel() {
  m_group.cancel();
}

std::optional<platform::ChildOutcome> GpuWork::outcome(const std::string& mode, int ordinal) {
  const auto it = std::find_if(m_jobs.begin(), m_jobs.end(), [&](const Job& job) {
    return job.mode == mode && job.ordinal == ordinal;
  });
  if (it == m_jobs.end()) {
    return std::nullopt;
  }
  join();
  const auto index = static_cast<size_t>(it - m_jobs.begin());
  return index < m_outcomes.size() ? std::optional(m_outcomes[index]) : std::nullopt;
}

} // namespace gpucheck::checks
