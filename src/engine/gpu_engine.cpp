#include "engine/gpu_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <utility>

namespace gpucheck::engine {

GpuEngine::GpuEngine(std::vector<Work> works, std::string sysroot,
                     std::optional<std::string> cuda_visible_devices,
                     std::chrono::milliseconds timeout)
    : m_sysroot(std::move(sysroot)), m_visible(std::move(cuda_visible_devices)) {
  m_options.works = std::move(works);
  m_options.timeout = timeout;
}

GpuEngine::~GpuEngine() {
  cancel();
  if (m_thread.joinable()) {
    if (finish()) {
      m_thread.join();
    } else {
      // Its thread is stuck past every bound (a bug): gpucheck must still exit. The scheduler
      // it uses is left to it.
      m_thread.detach();
      (void)m_scheduler.release(); // NOLINT(bugprone-unused-return-value)
    }
  }
}

std::chrono::milliseconds GpuEngine::time_bound(size_t gpus) const {
  const size_t started_with = m_gpu_count.load();
  const size_t count = started_with == 0 ? gpus : started_with;
  const std::chrono::milliseconds wait = m_turn_wait.value_or(default_turn_wait(count));
  return wait +
         work_limit_for(m_options.timeout, m_options.census_timeout, m_options.long_level,
                        m_options.long_duration) +
         std::chrono::milliseconds(5000);
}

bool GpuEngine::finish() {
  Finish& finish = *m_finish;
  std::unique_lock<std::mutex> guard(finish.lock);
  if (finish.finished) {
    return true;
  }
  if (m_abandoned) {
    return false;
  }
  const auto bound = m_started + time_bound(m_options.gpus.size());
  if (finish.changed.wait_until(guard, bound, [&finish] { return finish.finished; })) {
    return true;
  }
  guard.unlock();
  cancel();
  guard.lock();
  if (finish.changed.wait_for(guard, std::chrono::seconds(5),
                              [&finish] { return finish.finished; })) {
    return true;
  }
  m_abandoned = true;
  return false;
}

JobReport GpuEngine::unfinished_job(Work work) const {
  JobReport job;
  job.work = work;
  ChildFailure failure;
  failure.kind = ChildFailureKind::timeout;
  failure.timeout_s = std::chrono::duration<double>(time_bound(m_options.gpus.size())).count();
  failure.detail = fmt::format("the GPU engine did not finish within {:.0f} s and was left "
                               "behind; its children were stopped",
                               failure.timeout_s);
  job.outcome = process::ChildOutcome{};
  job.outcome->failure = failure;
  return job;
}

void GpuEngine::start(std::vector<protocol::VisibleGpu> gpus) {
  m_options.gpus = std::move(gpus);
  m_gpu_count.store(m_options.gpus.size());
  m_options.turn_wait = m_turn_wait.value_or(default_turn_wait(m_options.gpus.size()));
  m_options.work_limit = work_limit_for(m_options.timeout, m_options.census_timeout,
                                        m_options.long_level, m_options.long_duration);
  m_started = std::chrono::steady_clock::now();
  // Several GPUs: a check whose host copies are timed alone also times them on every GPU at once
  // (its part of Copies::host_together), gpu.bandwidth's copies_together.
  std::vector<Work>& works = m_options.works;
  if (m_options.gpus.size() > 1) {
    for (const WorkRow& row : work_table()) {
      const bool its_check_runs = std::any_of(works.begin(), works.end(), [&row](Work w) {
        return check_id(w) == row.check && copies_of(w) == Copies::host_alone;
      });
      if (row.copies == Copies::host_together && its_check_runs &&
          std::find(works.begin(), works.end(), row.work) == works.end()) {
        works.push_back(row.work);
      }
    }
  }
  {
    const std::lock_guard<std::mutex> guard(m_scheduler_lock);
    m_scheduler = std::make_unique<Scheduler>(m_options);
    if (m_interrupted.load()) {
      m_scheduler->interrupt(); // a signal came before the engine started: nothing starts
    }
  }
  if (m_probes_over) {
    m_scheduler->probes_over();
  }
  Scheduler* scheduler = m_scheduler.get();
  m_thread = std::thread([finish = m_finish, scheduler] {
    scheduler->run();
    {
      const std::lock_guard<std::mutex> guard(finish->lock);
      finish->finished = true;
    }
    finish->changed.notify_all();
  });
}

bool GpuEngine::start_early() {
  std::vector<protocol::VisibleGpu> gpus =
      protocol::visible_gpus(protocol::driver_gpus(m_sysroot), m_visible);
  // Without a UUID a child could not be told which GPU it is, and a GPU split into MIG
  // instances shows CUDA its instances: leave those to the late start, on the CUDA devices the
  // probes find.
  if (gpus.empty() || std::any_of(gpus.begin(), gpus.end(), [](const protocol::VisibleGpu& g) {
        return g.visible_devices.empty() || g.gpu.mig;
      })) {
    return false;
  }
  start(std::move(gpus));
  return true;
}

ProbeHooks GpuEngine::begin_probes(bool probes_use_gpu) {
  if (!probes_use_gpu && start_early()) {
    await_plan(std::chrono::milliseconds(1000));
    await_contexts(std::chrono::milliseconds(1000));
  }
  return ProbeHooks{[this] { await_contexts(std::chrono::milliseconds(1500)); }};
}

void GpuEngine::end_probes(bool probes_use_gpu) {
  if (probes_use_gpu) {
    start_early(); // else at the first active check, on the CUDA devices the probes found
  }
  probes_over();
}

void GpuEngine::await_contexts(std::chrono::milliseconds limit) {
  if (m_scheduler) {
    m_scheduler->await_contexts(limit);
  }
}

void GpuEngine::await_plan(std::chrono::milliseconds limit) {
  if (m_scheduler) {
    m_scheduler->await_plan(limit);
  }
}

void GpuEngine::probes_over() {
  m_probes_over = true;
  if (m_scheduler) {
    m_scheduler->probes_over();
  }
}

void GpuEngine::interrupt() {
  m_cancelled.store(true);
  m_interrupted.store(true);
  const std::lock_guard<std::mutex> guard(m_scheduler_lock);
  if (m_scheduler) {
    m_scheduler->interrupt();
  }
}

std::optional<Scheduler::Progress> GpuEngine::progress() const {
  const std::lock_guard<std::mutex> guard(m_scheduler_lock);
  return m_scheduler ? m_scheduler->progress() : std::nullopt;
}

void GpuEngine::cancel() {
  m_cancelled = true;
  // The watchdog's thread may cancel while the main thread starts the engine late.
  const std::lock_guard<std::mutex> guard(m_scheduler_lock);
  if (m_scheduler) {
    m_scheduler->cancel();
  }
}

std::optional<SpanView> GpuEngine::spanning_result(Work work,
                                                   const std::vector<TargetKey>& targets) {
  if (!m_scheduler && !m_cancelled && !targets.empty()) {
    (void)result(work, targets.front(), targets); // starts the engine the same way
  }
  if (!m_scheduler) {
    return std::nullopt;
  }
  if (!finish()) {
    return SpanView{unfinished_job(work), {}};
  }
  for (const JobReport& job : m_scheduler->jobs()) {
    if (job.work == work) {
      return SpanView{job, m_scheduler->gpus()};
    }
  }
  return std::nullopt;
}

std::optional<JobView> GpuEngine::result(Work work, const TargetKey& target,
                                         const std::vector<TargetKey>& targets) {
  if (!m_scheduler && !m_cancelled) {
    std::vector<protocol::VisibleGpu> gpus;
    for (const TargetKey& t : targets) {
      protocol::VisibleGpu gpu;
      gpu.gpu.bus_id = protocol::normal_bus_id(t.bus_id);
      gpu.ordinal = t.ordinal;
      gpus.push_back(std::move(gpu));
    }
    start(std::move(gpus));
  }
  if (!m_scheduler) {
    return std::nullopt;
  }
  if (!finish()) {
    GpuReport gpu;
    for (const protocol::VisibleGpu& visible : m_options.gpus) {
      if (visible.gpu.bus_id == protocol::normal_bus_id(target.bus_id)) {
        gpu.visible = visible;
      }
    }
    return JobView{unfinished_job(work), gpu};
  }
  const std::vector<GpuReport>& gpus = m_scheduler->gpus();
  std::optional<size_t> index;
  const std::string bus = protocol::normal_bus_id(target.bus_id);
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (!bus.empty() && gpus[g].visible.gpu.bus_id == bus) {
      index = g;
    }
  }
  if (!index) {
    // A MIG instance or a GPU without a bus id: CUDA's order is the engine's order.
    const auto it = std::find_if(targets.begin(), targets.end(),
                                 [&](const TargetKey& t) { return t.ordinal == target.ordinal; });
    const auto position = static_cast<size_t>(it - targets.begin());
    if (it != targets.end() && position < gpus.size() &&
        gpus[position].visible.gpu.bus_id.empty()) {
      index = position;
    }
  }
  if (!index) {
    return std::nullopt;
  }
  for (const JobReport& job : m_scheduler->jobs()) {
    if (job.work == work && job.gpu == *index) {
      return JobView{job, gpus[*index]};
    }
  }
  return std::nullopt;
}

std::unique_ptr<GpuEngine> make_gpu_engine(const Selection& selection, const std::string& sysroot,
                                           std::chrono::milliseconds timeout,
                                           const LongLevel& long_level,
                                           std::optional<std::chrono::milliseconds> turn_wait) {
  std::vector<Work> works;
  std::vector<Work> candidates = all_works();
  if (long_level.enabled) {
    const std::vector<Work> long_ones = long_works();
    candidates.insert(candidates.end(), long_ones.begin(), long_ones.end());
  }
  for (const Work work : candidates) {
    if (is_selected(check_id(work), selection)) {
      works.push_back(work);
    }
  }
  if (works.empty()) {
    return nullptr;
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  auto engine = std::make_unique<GpuEngine>(
      works, sysroot, visible != nullptr ? std::optional<std::string>(visible) : std::nullopt,
      timeout);
  engine->options().long_duration = long_level.duration;
  engine->options().force_long = long_level.force;
  engine->options().long_level = long_level.enabled;
  if (turn_wait) {
    engine->set_turn_wait(*turn_wait);
  }
  // Test seam (the overlapping-runs stress test): every GPU child is this test child mode with
  // these arguments ("test-gated 20 60 10 0 crash%=5"), over fake GPUs.
  if (const char* stand_in = std::getenv("GPUCHECK_TEST_GPU_CHILD");
      stand_in != nullptr && *stand_in != '\0') {
    std::vector<std::string> words;
    std::istringstream split(stand_in);
    for (std::string word; split >> word;) {
      words.push_back(word);
    }
    if (!words.empty() && words.front().starts_with("test-")) {
      for (const Work work : engine->options().works) {
        engine->options().job_override[work] = words;
      }
    }
  }
  return engine;
}

} // namespace gpucheck::engine
