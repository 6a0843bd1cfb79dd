#include "checks/gpu_work.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <utility>

#include "checks/visible_devices.hpp"
#include "gpucheck/registry.hpp"
#include "probes/sysroot.hpp"

namespace gpucheck::checks {

namespace {
struct ModeOfCheck {
  std::string_view check_id;
  std::string_view mode;
};
// Gate order on one GPU; bandwidth is last and runs alone.
constexpr std::array<ModeOfCheck, 4> k_modes{{{"gpu.compute", "gpu-compute"},
                                              {"gpu.streams", "gpu-streams"},
                                              {"gpu.cudnn", "gpu-cudnn"},
                                              {"gpu.bandwidth", "gpu-bandwidth"}}};
constexpr std::string_view k_exclusive_mode = "gpu-bandwidth";
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
  // Order the selected modes as k_modes does, whatever order the caller gave.
  std::vector<std::string> ordered;
  for (const ModeOfCheck& m : k_modes) {
    if (std::find(modes.begin(), modes.end(), m.mode) != modes.end()) {
      ordered.emplace_back(m.mode);
    }
  }
  std::vector<size_t> shared_jobs; // every job that is not exclusive
  std::vector<platform::ChildRequest> requests;
  // The last job set up on each GPU: the next one builds its context once that one is ready, so
  // a GPU builds one context at a time while the check before works.
  std::map<int, size_t> last_on_gpu;
  const auto setup_after = [&last_on_gpu](int ordinal) {
    const auto it = last_on_gpu.find(ordinal);
    return it == last_on_gpu.end() ? std::vector<size_t>{} : std::vector<size_t>{it->second};
  };
  for (const int ordinal : ordinals) {
    // Every job before this one on the same GPU: a child that ends early (it failed in its
    // setup) must not let the next one overtake a job that still runs.
    std::vector<size_t> earlier;
    for (const std::string& mode : ordered) {
      if (mode == k_exclusive_mode) {
        continue;
      }
      platform::ChildRequest request;
      request.mode = mode;
      request.args = {std::to_string(ordinal)};
      request.timeout = timeout;
      request.gated = true;
      request.release_after = earlier;
      request.setup_after = setup_after(ordinal);
      last_on_gpu[ordinal] = requests.size();
      earlier.push_back(requests.size());
      shared_jobs.push_back(requests.size());
      requests.push_back(std::move(request));
      m_jobs.push_back({mode, ordinal});
    }
  }
  if (std::find(ordered.begin(), ordered.end(), k_exclusive_mode) != ordered.end()) {
    std::vector<size_t> earlier = shared_jobs;
    for (const int ordinal : ordinals) {
      platform::ChildRequest request;
      request.mode = std::string(k_exclusive_mode);
      request.args = {std::to_string(ordinal)};
      request.timeout = timeout;
      request.gated = true;
      request.release_after = earlier;
      request.setup_after = setup_after(ordinal);
      last_on_gpu[ordinal] = requests.size();
      earlier.push_back(requests.size());
      requests.push_back(std::move(request));
      m_jobs.push_back({std::string(k_exclusive_mode), ordinal});
    }
  }
  for (platform::ChildRequest& request : requests) {
    m_group.start(std::move(request));
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
