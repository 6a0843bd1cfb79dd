#include "gpu/work_lane.hpp"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "gpu/child.hpp"
#include "process/child_process.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

namespace {
struct LaneCancelled : std::runtime_error {
  LaneCancelled() : std::runtime_error("the works before it did not finish") {}
};

class LaneThread final : public WorkLane {
public:
  LaneThread(protocol::Work work, LaneWork run, DeviceSession& session, const KernelModule& module)
      : m_name(protocol::work_name(work)), m_run(run), m_session(session), m_module(module),
        m_part(protocol::work_part(m_name)), m_thread([this] { run_lane(); }) {}
  LaneThread(const LaneThread&) = delete;
  LaneThread& operator=(const LaneThread&) = delete;
  LaneThread(LaneThread&&) = delete;
  LaneThread& operator=(LaneThread&&) = delete;
  ~LaneThread() override {
    {
      const std::lock_guard<std::mutex> guard(m_lock);
      m_cancelled = true;
    }
    m_changed.notify_all();
    if (m_thread.joinable()) {
      m_thread.join();
    }
  }

  void wait_prepared() override {
    std::unique_lock<std::mutex> guard(m_lock);
    m_changed.wait(guard, [this] { return m_prepared; });
  }

  nlohmann::json finish() override {
    {
      const std::lock_guard<std::mutex> guard(m_lock);
      m_turn = true;
    }
    m_changed.notify_all();
    m_thread.join();
    return std::move(m_part);
  }

private:
  void run_lane() {
    own_stages_on_this_thread(m_name);
    write_lane_line(protocol::k_lane_preparing);
    const LaneSteps steps{[this] { say_prepared(); }, [this] { await_turn(); }};
    if (const auto failure = failure_of([&] { m_run(m_session, m_module, m_part, steps); })) {
      m_part["failure"] = protocol::to_json(*failure);
    }
    say_prepared(); // it ended before (no library, a failure): nothing of it runs beside the rest
  }

  void write_lane_line(std::string_view state) {
    nlohmann::json line = nlohmann::json::object();
    protocol::write_work_line({m_name, std::nullopt, std::string(state)}, line);
    process::write_result_line(line);
  }

  void say_prepared() {
    {
      const std::lock_guard<std::mutex> guard(m_lock);
      if (m_prepared) {
        return;
      }
      m_prepared = true;
    }
    write_lane_line(protocol::k_lane_prepared);
    m_changed.notify_all();
  }

  void await_turn() {
    std::unique_lock<std::mutex> guard(m_lock);
    m_changed.wait(guard, [this] { return m_turn || m_cancelled; });
    if (!m_turn) {
      throw LaneCancelled();
    }
  }

  std::string m_name;
  LaneWork m_run;
  DeviceSession& m_session;
  const KernelModule& m_module;
  nlohmann::json m_part;
  std::mutex m_lock;
  std::condition_variable m_changed;
  bool m_prepared = false;  ///< under m_lock
  bool m_turn = false;      ///< under m_lock
  bool m_cancelled = false; ///< under m_lock
  std::thread m_thread;     // last: it starts once the members above exist
};
} // namespace

std::unique_ptr<WorkLane> start_lane(protocol::Work work, LaneWork run, DeviceSession& session,
                                     const KernelModule& module) {
  return std::make_unique<LaneThread>(work, run, session, module);
}

} // namespace gpucheck::gpu
