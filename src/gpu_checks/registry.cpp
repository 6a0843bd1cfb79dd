#include "gpu_checks/registry.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "gates/metric_names.hpp"
#include "gpu/gpu_children.hpp"
#include "gpucheck/registry.hpp"

namespace gpucheck::gpu_checks {

Error payload_error(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t open = what.find("key '");
  const size_t close = open == std::string::npos ? open : what.find("' not found", open + 5);
  if (close != std::string::npos) {
    return Error{what.substr(open + 5, close - open - 5) + " is missing"};
  }
  return Error{what};
}

Expected<ChildReport> read_child_report(const nlohmann::json& json) {
  ChildReport child;
  Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(json);
  if (!envelope) {
    return envelope.error();
  }
  child.envelope = std::move(envelope.value());
  Expected<std::optional<protocol::KernelModuleReport>> module = protocol::read_kernel_module(json);
  if (!module) {
    return module.error();
  }
  child.module = std::move(module.value());
  Expected<std::optional<protocol::DeviceDescription>> device = protocol::read_device(json);
  if (!device) {
    return device.error();
  }
  child.device = std::move(device.value());
  return child;
}

ChildReport readable_child_report(const nlohmann::json& json) {
  ChildReport child;
  if (Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(json); envelope) {
    child.envelope = std::move(envelope.value());
  }
  if (auto module = protocol::read_kernel_module(json); module) {
    child.module = std::move(module.value());
  }
  if (auto device = protocol::read_device(json); device) {
    child.device = std::move(device.value());
  }
  return child;
}

std::span<const Registration> registered() {
#define GPUCHECK_REGISTER_GPU_CHECK(name) name##_registration(),
  static const std::vector<Registration> checks{GPUCHECK_GPU_CHECKS(GPUCHECK_REGISTER_GPU_CHECK)};
#undef GPUCHECK_REGISTER_GPU_CHECK
  return checks;
}

void install() {
  static bool installed = false;
  if (installed) {
    return;
  }
  installed = true;
  all_checks(); // the built-in checks' own findings join the catalogue first
  for (const Registration& r : registered()) {
    const engine::Work work = engine::add_work(r.work);
    if (r.work.child == engine::WorkChild::spanning) {
      gpu::add_span_runner({work, r.span_run, r.span_load, r.span_prepare});
    } else {
      gpu::add_work_runner({work, r.run, r.needs_kernels, r.alone, r.lane, r.connections,
                            r.own_child, r.release_kept});
    }
    for (const WorkPart& part : r.parts) {
      engine::WorkRow row = r.work;
      row.name = part.work;
      row.mode = {};
      row.min_mib = part.min_mib;
      row.wanted_mib = part.wanted_mib;
      row.prepare_mib = part.prepare_mib;
      row.copies = part.copies;
      row.part = true;
      gpu::add_work_runner({engine::add_work(row), part.run, r.needs_kernels, r.alone, nullptr,
                            r.connections, nullptr, nullptr, part.on_kept});
    }
    std::vector<std::string_view> names;
    for (const MetricSpec& m : r.metrics) {
      names.push_back(m.name);
      if (m.floor.figure != nullptr) {
        checks::add_metric_floor(m.name, m.floor);
      }
    }
    gates::add_metric_names(names);
    for (const VerifySpec& v : r.verify) {
      if (v.code) {
        checks::add_verify_code(v.kind, *v.code);
      } else {
        checks::add_own_verify_kind(v.kind);
      }
    }
    add_check(r.check, r.listed);
  }
}

} // namespace gpucheck::gpu_checks
