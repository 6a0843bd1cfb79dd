// The children of gpucheck's own GPU works (work_runners()): one work alone (gpu-compute, ... :
// bench/compare.py and a run by hand), or several on one context
// (gpu-device: the engine's shared child, rule same_child in src/engine/plan.cpp).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/session.hpp"
#include "process/child_process.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

namespace {
std::vector<WorkRunner>& runners() {
  static std::vector<WorkRunner> table;
  return table;
}

const WorkRunner* runner_of(protocol::Work work) {
  for (const WorkRunner& r : runners()) {
    if (r.work == work) {
      return &r;
    }
  }
  return nullptr;
}

/// The session and the kernel module a work runs on.
void open_device(int ordinal, std::unique_ptr<DeviceSession>& session,
                 std::unique_ptr<KernelModule>& module, int connections) {
  session = std::make_unique<DeviceSession>(ordinal, connections);
  set_stage("load kernels");
  module = std::make_unique<KernelModule>(*session);
}
} // namespace

std::span<const WorkRunner> work_runners() {
  return runners();
}

void add_work_runner(const WorkRunner& runner) {
  if (runner_of(runner.work) != nullptr) {
    throw std::logic_error(
        fmt::format("GPU work '{}' has a runner already", protocol::work_name(runner.work)));
  }
  runners().push_back(runner);
}

const WorkRunner* runner_of_mode(std::string_view mode) {
  for (const WorkRunner& r : runners()) {
    if (const std::string_view m = protocol::child_mode(r.work);
        (r.run != nullptr || r.own_child != nullptr) && !m.empty() && m == mode) {
      return &r;
    }
  }
  return nullptr;
}

nlohmann::json run_single_work(const std::vector<std::string>& args, const WorkRunner& work) {
  return run_gpu_child(args, [&work](int ordinal, nlohmann::json& out) {
    std::unique_ptr<DeviceSession> session;
    std::unique_ptr<KernelModule> module;
    try {
      open_device(ordinal, session, module, 1); // one queue serves every work but cuDNN's
    } catch (...) {
      if (session) {
        out["device"] = session->describe();
      }
      throw;
    }
    out["device"] = session->describe();
    out["module"] = module->report();
    if (!module->loaded() && work.needs_kernels) {
      return;
    }
    work.run(*session, *module, out);
  });
}

namespace {
/// The works of gpu-device's argument ("compute,streams,...,cudnn"), in order.
std::vector<const WorkRunner*> works_of(const std::vector<std::string>& args) {
  std::vector<const WorkRunner*> works;
  for (const std::string& name : protocol::read_work_list(args.size() > 1 ? args[1] : "")) {
    const std::optional<protocol::Work> work = protocol::work_named(name);
    const WorkRunner* runner = work ? runner_of(*work) : nullptr;
    if (runner == nullptr) {
      throw std::runtime_error(fmt::format("unknown work '{}'", name));
    }
    works.push_back(runner);
  }
  return works;
}

/// The shared child's lane: its one work whose runner is a lane (the engine plans it last).
const WorkRunner* lane_of(const std::vector<const WorkRunner*>& works) {
  const auto lane = std::find_if(works.begin(), works.end(),
                                 [](const WorkRunner* w) { return w->lane != nullptr; });
  return lane == works.end() ? nullptr : *lane;
}

/// One work on the open session: its line, and its failure if it had one.
std::pair<nlohmann::json, std::optional<protocol::PayloadFailure>>
run_one(const WorkRunner* w, DeviceSession& session, const KernelModule& module,
        const std::unique_ptr<WorkLane>& lane) {
  nlohmann::json part;
  std::optional<protocol::PayloadFailure> failure;
  if (!w->on_kept) {
    // What a work kept serves only the work after it: later works may use the whole budget.
    for (const WorkRunner& r : runners()) {
      if (r.release_kept != nullptr) {
        r.release_kept();
      }
    }
  }
  if (w->lane != nullptr) {
    part = lane->finish();
    if (!part.contains("device")) {
      part["device"] = session.describe();
    }
    if (const auto f = part.find("failure"); f != part.end() && f->is_object()) {
      failure = protocol::PayloadFailure{};
      failure->message = f->value("message", "");
      failure->name = f->value("name", "");
    }
    return {std::move(part), failure};
  }
  part = protocol::work_part(protocol::work_name(w->work));
  part["device"] = session.describe();
  part["module"] = module.report();
  if (lane && w->alone) {
    session.before_ready([&lane] { lane->wait_prepared(); });
  }
  if (module.loaded() || !w->needs_kernels) {
    failure = failure_of([&] { w->run(session, module, part); });
  }
  session.before_ready({});
  if (failure) {
    part["failure"] = protocol::to_json(*failure);
  }
  return {std::move(part), failure};
}
} // namespace

nlohmann::json child_gpu_device(const std::vector<std::string>& args) {
  return run_gpu_child(args, [&args](int ordinal, nlohmann::json& summary) {
    const std::vector<const WorkRunner*> works = works_of(args);
    const WorkRunner* const lane_work = lane_of(works);
    int connections = 1;
    for (const WorkRunner* w : works) {
      connections = std::max(connections, w->connections);
    }
    summary["works"] = args.size() > 1 ? args[1] : std::string();
    std::unique_ptr<DeviceSession> session;
    std::unique_ptr<KernelModule> module;
    if (const auto failure =
            failure_of([&] { open_device(ordinal, session, module, connections); })) {
      // No context (or no driver): every work reports the same failure, as each would alone.
      for (const WorkRunner* w : works) {
        nlohmann::json part = protocol::work_part(protocol::work_name(w->work));
        if (session) {
          part["device"] = session->describe();
        }
        part["failure"] = protocol::to_json(*failure);
        part["metrics"].push_back(peak_rss_metric());
        process::write_result_line(part);
      }
      return;
    }
    session->begin_works(static_cast<int>(works.size()));
    // Declared after the session and the module, so it ends (its thread joined) before them.
    const std::unique_ptr<WorkLane> lane =
        lane_work != nullptr ? start_lane(lane_work->work, lane_work->lane, *session, *module)
                             : nullptr;
    std::string stopped; // why the works left are not run
    for (const WorkRunner* w : works) {
      if (!stopped.empty()) {
        nlohmann::json line = nlohmann::json::object();
        protocol::write_work_line({std::string(protocol::work_name(w->work)), stopped}, line);
        process::write_result_line(line);
        continue;
      }
      auto [part, failure] = run_one(w, *session, *module, lane);
      session->end_work();
      part["metrics"].push_back(peak_rss_metric());
      process::write_result_line(part);
      // A sticky error (an illegal address, a lost GPU) leaves the context unusable: the works
      // after it would only repeat it, each reported as its own failure.
      if (const auto error = failure ? session->context_error() : std::nullopt) {
        stopped = fmt::format("not run: {} failed ({}) and left its CUDA context unusable ({})",
                              protocol::check_id(w->work),
                              failure->name.empty() ? failure->message : failure->name, *error);
      }
    }
  });
}

} // namespace gpucheck::gpu
