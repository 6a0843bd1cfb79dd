// The child over every GPU of a run (gpu-peers): one process sees every GPU, holds each one's
// primary context (PeerSession), and does the spanning works it is given (gpu.p2p's peer copies,
// then gpu.nccl's all-reduce: their runners come from their folders, add_span_runner()), one
// after another, each one's line written as soon as it is over.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/peer_session.hpp"
#include "process/child_process.hpp"
#include "protocol/messages.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

namespace {
std::vector<SpanRunner>& runners() {
  static std::vector<SpanRunner> table;
  return table;
}

const SpanRunner& runner_named(const std::string& name) {
  const std::optional<protocol::Work> work = protocol::work_named(name);
  for (const SpanRunner& r : runners()) {
    if (work && r.work == *work) {
      return r;
    }
  }
  throw std::runtime_error(fmt::format("unknown work '{}'", name));
}

/// Why the works after `work` cannot run: a sticky error that left a context unusable (they
/// would only repeat it), or "" when every context still answers.
std::string stopped_by(PeerSession& session, const std::string& work) {
  const CudaApi& api = session.api();
  for (PeerGpu& gpu : session.gpus()) {
    if (api.cuCtxSetCurrent == nullptr || api.cuCtxSynchronize == nullptr ||
        api.cuCtxSetCurrent(gpu.context) != CUDA_SUCCESS) {
      continue;
    }
    const CUresult rc = api.cuCtxSynchronize();
    if (rc != CUDA_SUCCESS) {
      return fmt::format("not run: {} failed and left a CUDA context unusable ({})", work,
                         cuda_error_name(rc));
    }
  }
  return {};
}

std::vector<int> parse_ordinals(const std::string& text) {
  std::vector<int> ordinals;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    ordinals.push_back(std::stoi(item));
  }
  if (ordinals.size() < 2) {
    throw std::runtime_error("gpu-peers needs at least two devices");
  }
  return ordinals;
}
} // namespace

std::span<const SpanRunner> span_runners() {
  return runners();
}

void add_span_runner(const SpanRunner& runner) {
  if (std::any_of(runners().begin(), runners().end(),
                  [&runner](const SpanRunner& r) { return r.work == runner.work; })) {
    throw std::logic_error(
        fmt::format("spanning work '{}' has a runner already", protocol::work_name(runner.work)));
  }
  runners().push_back(runner);
}

nlohmann::json child_gpu_peers(const std::vector<std::string>& args) {
  // args: ORDINALS (comma-separated, as this child sees them) [WORKS: "peers", "nccl",
  // "peers,nccl"] ["sweep": the long level's every size of the peer copies]. One work: its JSON
  // is the result; several: one result line each, in order.
  const std::vector<std::string> names =
      protocol::read_work_list(args.size() > 1 ? args[1] : "peers");
  std::vector<const SpanRunner*> works;
  for (const std::string& name : names) {
    works.push_back(&runner_named(name));
  }
  // The engine's plan may leave a work beyond gpucheck's budget out (rule nccl_on_idle_gpus): its
  // reason. What the others load before the session touches no GPU, while nothing waits for it.
  const char* not_run_text = std::getenv("GPUCHECK_NCCL_NOT_RUN");
  const std::string not_run = not_run_text != nullptr ? not_run_text : "";
  const auto left_out = [&not_run](const SpanRunner* w) {
    return !not_run.empty() && protocol::work_row(w->work).beyond_budget;
  };
  for (const SpanRunner* w : works) {
    if (w->load != nullptr && !left_out(w)) {
      w->load();
    }
  }
  std::unique_ptr<PeerSession> session;
  const std::optional<protocol::PayloadFailure> opened = failure_of([&] {
    session = std::make_unique<PeerSession>(parse_ordinals(args.empty() ? "" : args[0]));
  });
  std::vector<nlohmann::json> parts;
  std::string stopped; // why the works left are not run
  for (size_t w = 0; w < works.size(); ++w) {
    const std::string& name = names[w];
    if (left_out(works[w])) {
      protocol::write_work_line({name, not_run}, parts.emplace_back());
    } else if (!stopped.empty()) {
      protocol::write_work_line({name, stopped}, parts.emplace_back());
    } else {
      nlohmann::json part = protocol::work_part(name);
      std::optional<protocol::PayloadFailure> failure = opened;
      if (!failure) {
        SpanStep step;
        step.sweep = args.size() > 2 && args[2] == "sweep";
        step.last = w + 1 == works.size();
        // The next work's preparation (NCCL's initialisation, mostly NCCL loading its kernels)
        // before this one's gate: beside the per-GPU work where the plan allows
        // (span_beside_on_idle_gpus), and off the timed path in any case.
        if (const SpanRunner* next = step.last ? nullptr : works[w + 1];
            next != nullptr && next->prepare != nullptr && !left_out(next)) {
          step.before_gate = [next, &session] { next->prepare(*session); };
        }
        failure = failure_of([&] { works[w]->run(*session, step, part); });
      }
      if (failure) {
        part["failure"] = protocol::to_json(*failure);
        stopped = session ? stopped_by(*session, name) : std::string();
      }
      part["metrics"].push_back(peak_rss_metric());
      parts.push_back(std::move(part));
    }
    if (w + 1 < works.size()) {
      protocol::gate::work_done();
    } else {
      protocol::gate::done();
    }
    if (works.size() > 1) {
      process::write_result_line(parts.back());
    }
  }
  set_stage("done");
  // The contexts too are left for the process's exit (gpu.nccl's work leaves its buffers to it
  // as well): the parent takes the result when it is written, without waiting for their release.
  static_cast<void>(session.release());
  if (works.size() == 1) {
    write_timeline(parts.front());
    return parts.front();
  }
  nlohmann::json summary{{"works", args.size() > 1 ? args[1] : std::string()}};
  write_timeline(summary);
  return summary;
}

} // namespace gpucheck::gpu
