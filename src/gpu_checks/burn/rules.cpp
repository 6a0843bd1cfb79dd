#include "gpu_checks/burn/rules.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>

#include "checks/rules/xid_catalog.hpp"
#include "findings/catalog.hpp"
#include "gpu_checks/burn/burn.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::gpu_checks::burn {

using checks::find_xid;
using checks::GpuTarget;
using checks::Judgement;
using checks::k_xid_catalogue_url;
using checks::XidClass;
using checks::XidInfo;

namespace {
std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& part : parts) {
    out += out.empty() ? "" : std::string(separator);
    out += part;
  }
  return out;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string gpu_words(const GpuTarget& gpu) {
  return gpu.name.empty() ? fmt::format("GPU {}", gpu.gpu_index)
                          : fmt::format("GPU {} ({})", gpu.gpu_index, gpu.name);
}
} // namespace

namespace {
struct ReasonBit {
  uint64_t bit;
  std::string_view name;
};
// Every reason the summary names (GPU idle is left out: it shows between GEMM types).
constexpr std::array<ReasonBit, 8> k_reason_names{{
    {0x2, "applications clocks setting"},
    {k_reason_sw_power_cap, "SW power cap"},
    {k_reason_hw_slowdown, "HW slowdown"},
    {0x10, "sync boost"},
    {k_reason_sw_thermal, "SW thermal slowdown"},
    {k_reason_hw_thermal, "HW thermal slowdown"},
    {k_reason_hw_power_brake, "HW power brake"},
    {0x100, "display clock setting"},
}};

std::string_view reason_name(uint64_t bit) {
  for (const ReasonBit& r : k_reason_names) {
    if (r.bit == bit) {
      return r.name;
    }
  }
  return "unknown reason";
}

/// Samples with `bit` set, and the first of them.
struct BitCount {
  size_t count = 0;
  size_t first = 0;
};

BitCount count_bit(const protocol::BurnWatch& watch, uint64_t bit) {
  BitCount c;
  for (size_t i = 0; i < watch.reasons.size(); ++i) {
    if ((watch.reasons[i] & bit) != 0) {
      if (c.count++ == 0) {
        c.first = i;
      }
    }
  }
  return c;
}
} // namespace

ClockVerdict judge_burn_clocks(const GpuTarget& gpu, const protocol::BurnWatch& watch) {
  ClockVerdict verdict;
  if (!watch.available) {
    verdict.summary =
        fmt::format("no NVML watch ({})", watch.why.empty() ? "unavailable" : watch.why);
    return verdict;
  }
  const size_t n = watch.reasons.size();
  if (n == 0) {
    verdict.summary = "NVML gave no sample";
    return verdict;
  }
  const int index = gpu.gpu_index;
  const int max_temp = *std::max_element(watch.temp_c.begin(), watch.temp_c.end());
  const double max_power = *std::max_element(watch.power_w.begin(), watch.power_w.end());
  const int highest_sm = *std::max_element(watch.sm_mhz.begin(), watch.sm_mhz.end());
  const std::string max_text = watch.max_sm_mhz > 0
                                   ? fmt::format("max {} MHz", watch.max_sm_mhz)
                                   : fmt::format("highest seen {} MHz", highest_sm);
  const auto share = [n](size_t count) {
    return static_cast<double>(count) / static_cast<double>(n);
  };
  const auto start_s = [&watch](size_t i) {
    return fmt::format("{:.1f}", static_cast<double>(watch.t_ms[i]) / 1000.0);
  };
  // Hardware reasons: HW slowdown accompanies HW thermal slowdown and the power brake, so it is
  // named alone only without them.
  bool hw_named = false;
  for (const uint64_t bit : {k_reason_hw_power_brake, k_reason_hw_thermal, k_reason_hw_slowdown}) {
    const BitCount c = count_bit(watch, bit);
    if (c.count < k_min_throttled_samples || share(c.count) <= k_hw_throttle_share) {
      continue;
    }
    if (bit == k_reason_hw_slowdown && hw_named) {
      continue;
    }
    hw_named = true;
    verdict.findings.push_back(make_finding(k_throttled_hw, index, index,
                                            fmt::format("{} ({:#x})", reason_name(bit), bit),
                                            fmt::format("{:.1f}", 100.0 * share(c.count)), n,
                                            start_s(c.first), watch.sm_mhz[c.first], max_text));
  }
  if (const BitCount c = count_bit(watch, k_reason_sw_thermal);
      c.count >= k_min_throttled_samples && share(c.count) > k_sw_thermal_share) {
    verdict.findings.push_back(
        make_finding(k_thermal, index, index, fmt::format("{:.1f}", 100.0 * share(c.count)), n,
                     start_s(c.first), max_temp, watch.sm_mhz[c.first], max_text));
  }
  std::vector<int> sm = watch.sm_mhz;
  std::sort(sm.begin(), sm.end());
  verdict.summary = fmt::format("max {} C, {:.0f} W; SM clock median {} MHz ({}) over {} samples",
                                max_temp, max_power, sm[sm.size() / 2], max_text, n);
  std::vector<std::string> seen;
  for (const ReasonBit& r : k_reason_names) {
    const BitCount c = count_bit(watch, r.bit);
    if (c.count == 0) {
      continue;
    }
    seen.push_back(fmt::format("{} in {:.0f}% of samples{}", r.name, 100.0 * share(c.count),
                               r.bit == k_reason_sw_power_cap ? " (normal at full load)" : ""));
  }
  verdict.summary +=
      seen.empty() ? "; no clock-event reason" : "; clock events: " + join(seen, ", ");
  return verdict;
}

std::vector<Finding> burn_xid_findings(const GpuTarget& gpu, const protocol::BurnReport& burn) {
  if (burn.xids.empty()) {
    return {};
  }
  constexpr size_t k_listed = 8;
  std::vector<std::string> events;
  bool only_application = true;
  for (const protocol::BurnXid& x : burn.xids) {
    const XidInfo* info = find_xid(x.xid);
    only_application = only_application && info != nullptr && info->weight == XidClass::application;
    if (events.size() < k_listed) {
      events.push_back(fmt::format(
          "Xid {} at {:.1f} s ({})", x.xid, static_cast<double>(x.t_ms) / 1000.0,
          info != nullptr ? info->meaning : std::string_view("not in gpucheck's table")));
    }
  }
  std::string list = join(events, "; ");
  if (burn.xids.size() > k_listed) {
    list += fmt::format("; and {} more", burn.xids.size() - k_listed);
  }
  Finding finding = make_finding(k_xid, gpu.gpu_index, gpu.gpu_index,
                                 plural(burn.xids.size(), "Xid event"), list, k_xid_catalogue_url);
  if (only_application && !gpu.other_processes.empty()) {
    // Application Xids on a GPU shared with other processes may be theirs, not the burn's.
    finding.severity = Severity::warn;
    finding.message += "; other processes use this GPU and application Xids may be theirs";
  }
  return {finding};
}

Judgement judge_burn(const GpuTarget& gpu, const protocol::BurnReport& burn) {
  Judgement judgement;
  const int index = gpu.gpu_index;
  std::vector<std::string> types;
  uint64_t mismatched = 0;
  for (const protocol::BurnType& t : burn.types) {
    types.push_back(fmt::format("{} {:.1f} TFLOP/s x{}", t.type, t.tflops_median, t.iterations));
    if (t.mismatched_iterations == 0) {
      continue;
    }
    mismatched += t.mismatched_iterations;
    judgement.findings.push_back(make_finding(
        k_mismatch, index, index, t.type, t.n, t.mismatched_iterations, t.iterations,
        t.first_mismatch ? std::to_string(t.first_mismatch->iteration) : std::string("?"),
        t.first_mismatch ? std::to_string(t.first_mismatch->words) : std::string("?")));
  }
  if (burn.types.empty() && !burn.interrupted) {
    judgement.findings.push_back(make_finding(codes::k_gpu_child_failed, index, index,
                                              "GPU sustains full load correctly",
                                              "the burn reported no GEMM type"));
  }
  const ClockVerdict clocks = judge_burn_clocks(gpu, burn.watch);
  judgement.findings.insert(judgement.findings.end(), clocks.findings.begin(),
                            clocks.findings.end());
  for (Finding& f : burn_xid_findings(gpu, burn)) {
    judgement.findings.push_back(std::move(f));
  }
  std::string xids;
  if (burn.xid_watch == "nvml") {
    xids = burn.xids.empty() ? "no Xid (NVML events)" : plural(burn.xids.size(), "Xid");
  } else {
    std::string why = burn.xid_watch;
    if (why.rfind("unavailable: ", 0) == 0) {
      why = why.substr(13);
    }
    xids = fmt::format("Xids not watched ({})", why.empty() ? "unavailable" : why);
  }
  if (types.empty()) {
    // Nothing ran (stopped at once): no comparison or clock to speak of.
    judgement.summary =
        fmt::format("{}: {:.0f} s burn{}: no GEMM ran; {}", gpu_words(gpu), burn.elapsed_s,
                    burn.cublas.empty() ? std::string() : ", cuBLAS " + burn.cublas, xids);
  } else {
    judgement.summary = fmt::format(
        "{}: {:.0f} s burn{}: {}; {}; {}; {}", gpu_words(gpu), burn.elapsed_s,
        burn.cublas.empty() ? std::string() : ", cuBLAS " + burn.cublas, join(types, ", "),
        mismatched == 0 ? std::string("every iteration identical to the first")
                        : fmt::format("{} from the first",
                                      plural(mismatched, "iteration DIFFERS", "iterations DIFFER")),
        clocks.summary, xids);
  }
  if (burn.interrupted) {
    std::vector<std::string> done;
    for (const protocol::BurnType& t : burn.types) {
      done.push_back(t.type);
    }
    judgement.summary += "; stopped by the user";
    judgement.findings.push_back(make_finding(
        codes::k_gpu_long_interrupted, index, index, "the burn",
        fmt::format("{:.1f}", burn.elapsed_s), fmt::format("{:.0f}", burn.duration_s),
        done.empty() ? std::string("no GEMM type ran")
                     : fmt::format("{} burned; the rest was not run", join(done, ", "))));
  }
  return judgement;
}

namespace {
// What each model reaches, measured, never a datasheet peak. Add a row only with its source.
constexpr GemmReference k_references[] = {
    {"NVIDIA H200", "bf16", 8192, 812.0,
     "PyTorch 2.11 `a @ b`, 8192^3 bf16, on one H200 (nvidia-h200), "
     "/work/shared/reference/anchors.md"},
    {"NVIDIA H200", "fp32", 8192, 51.0,
     "PyTorch 2.11 `a @ b`, 8192^3 fp32 without TF32, on one H200 (nvidia-h200), "
     "/work/shared/reference/anchors.md"},
    // Measured as the burn runs (back to back for 5 s, median per GEMM): an H100 at its 700 W
    // limit is slower sustained than in a burst (BF16 723-769 burst). docs/performance.md.
    {"NVIDIA H100 80GB HBM3", "bf16", 8192, 708.0,
     "PyTorch 2.11 `a @ b` back to back 5 s, 8192^3 bf16, H100 SXM (device kind nvidia-h200-x2, "
     "driver 580.159.04), 2026-11-26, bench/long_level.py"},
    {"NVIDIA H100 80GB HBM3", "fp16", 8192, 658.0,
     "PyTorch 2.11 `a @ b` back to back 5 s, 8192^3 fp16, H100 SXM, 2026-11-26"},
    {"NVIDIA H100 80GB HBM3", "fp32", 8192, 51.7,
     "PyTorch 2.11 `a @ b` back to back 5 s, 8192^3 fp32 without TF32, H100 SXM, 2026-11-26"},
    {"NVIDIA H100 80GB HBM3", "fp64", 8192, 53.6,
     "PyTorch 2.11 `a @ b` back to back 5 s, 8192^3 fp64, H100 SXM, 2026-11-26"},
};
} // namespace

std::span<const GemmReference> gemm_references() {
  return k_references;
}

const GemmReference* find_gemm_reference(std::string_view model, std::string_view type, int n) {
  for (const GemmReference& row : k_references) {
    if (row.model == model && row.type == type && row.n == n) {
      return &row;
    }
  }
  return nullptr;
}

namespace {
bool same_model(const BurnPeer& a, const BurnPeer& b) {
  return a.model == b.model && a.sm_count == b.sm_count && a.cublas == b.cublas;
}

const protocol::BurnType* type_of(const BurnPeer& peer, const protocol::BurnType& like) {
  for (const protocol::BurnType& t : peer.types) {
    if (t.type == like.type && t.n == like.n) {
      return &t;
    }
  }
  return nullptr;
}

/// A figure measured beside other processes says what the GPU did then, not what it can do.
void label_contended(Finding& finding, bool contended) {
  if (contended) {
    finding.severity = Severity::info;
    finding.message += " (measured under contention)";
  }
}

/// gpu.burn_gpus_disagree for `self`'s type `t`, when the GPUs of its model gave other hashes
/// and its hash is not the one most of them gave.
std::optional<Finding> disagreement(const std::vector<BurnPeer>& peers, size_t self,
                                    const protocol::BurnType& t) {
  std::map<std::string, std::vector<int>> by_hash;
  for (const BurnPeer& peer : peers) {
    if (!same_model(peer, peers[self])) {
      continue;
    }
    if (const protocol::BurnType* other = type_of(peer, t);
        other != nullptr && !other->result_hash.empty()) {
      by_hash[other->result_hash].push_back(peer.gpu_index);
    }
  }
  if (by_hash.size() < 2 || t.result_hash.empty()) {
    return std::nullopt;
  }
  size_t most = 0;
  size_t holders_of_most = 0;
  std::string majority;
  for (const auto& [hash, gpus] : by_hash) {
    if (gpus.size() > most) {
      most = gpus.size();
      holders_of_most = 1;
      majority = hash;
    } else if (gpus.size() == most) {
      ++holders_of_most;
    }
  }
  const bool unique_majority = holders_of_most == 1;
  if (unique_majority && majority == t.result_hash) {
    return std::nullopt;
  }
  const auto gpu_list = [](const std::vector<int>& gpus) {
    std::vector<std::string> names;
    for (const int g : gpus) {
      names.push_back(std::to_string(g));
    }
    return fmt::format("GPU{} {}", gpus.size() == 1 ? "" : "s", join(names, ", "));
  };
  std::string sentence;
  if (unique_majority) {
    sentence = fmt::format("{} of this model gave {}: this GPU is in the minority",
                           gpu_list(by_hash[majority]), majority);
  } else {
    std::vector<std::string> others;
    for (const auto& [hash, gpus] : by_hash) {
      if (hash != t.result_hash) {
        others.push_back(fmt::format("{} gave {}", gpu_list(gpus), hash));
      }
    }
    sentence = fmt::format("{}: with no majority gpucheck cannot tell which GPU is wrong",
                           join(others, "; "));
  }
  const BurnPeer& me = peers[self];
  return make_finding(k_gpus_disagree, me.gpu_index, me.gpu_index, me.model, t.type, t.n,
                      t.result_hash, sentence);
}
} // namespace

std::vector<PeerVerdict> judge_burn_peers(const std::vector<BurnPeer>& peers) {
  std::vector<PeerVerdict> verdicts(peers.size());
  const std::string floor = fmt::format("{:.0f}", 100.0 * k_burn_slow_fraction);
  for (size_t i = 0; i < peers.size(); ++i) {
    const BurnPeer& me = peers[i];
    PeerVerdict& verdict = verdicts[i];
    std::vector<std::string> against_reference;
    size_t siblings = 0;
    for (size_t j = 0; j < peers.size(); ++j) {
      if (j != i && same_model(me, peers[j]) && !peers[j].contended) {
        ++siblings;
      }
    }
    for (const protocol::BurnType& t : me.types) {
      if (auto finding = disagreement(peers, i, t)) {
        verdict.findings.push_back(std::move(*finding));
      }
      if (t.iterations <= 0 || t.tflops_median <= 0.0) {
        continue;
      }
      if (const GemmReference* row = find_gemm_reference(me.model, t.type, t.n)) {
        const double ratio = t.tflops_median / row->tflops;
        against_reference.push_back(fmt::format("{} {:.0f}%", t.type, 100.0 * ratio));
        if (ratio < k_burn_slow_fraction) {
          Finding finding = make_finding(k_slow, me.gpu_index, me.gpu_index, me.model, t.type, t.n,
                                         fmt::format("{:.1f}", t.tflops_median),
                                         fmt::format("{:.0f}", 100.0 * ratio),
                                         fmt::format("{:.0f}", row->tflops), row->source, floor);
          label_contended(finding, me.contended);
          verdict.findings.push_back(std::move(finding));
        }
      }
      std::vector<double> others;
      for (size_t j = 0; j < peers.size(); ++j) {
        if (j == i || !same_model(me, peers[j]) || peers[j].contended) {
          continue;
        }
        if (const protocol::BurnType* other = type_of(peers[j], t);
            other != nullptr && other->tflops_median > 0.0) {
          others.push_back(other->tflops_median);
        }
      }
      if (others.empty()) {
        continue;
      }
      const double median = median_of(others);
      if (t.tflops_median < k_burn_slow_fraction * median) {
        Finding finding =
            make_finding(k_outlier, me.gpu_index, me.gpu_index, me.model, t.type, t.n,
                         fmt::format("{:.1f}", t.tflops_median),
                         fmt::format("{:.0f}", 100.0 * t.tflops_median / median),
                         plural(others.size(), "other GPU"), fmt::format("{:.1f}", median), floor);
        label_contended(finding, me.contended);
        verdict.findings.push_back(std::move(finding));
      }
    }
    std::vector<std::string> notes;
    if (!against_reference.empty()) {
      notes.push_back(fmt::format("TFLOP/s against {}'s measured reference: {}", me.model,
                                  join(against_reference, ", ")));
    }
    if (siblings > 0) {
      notes.push_back(
          fmt::format("TFLOP/s compared with {} of this model", plural(siblings, "other GPU")));
    }
    verdict.note =
        notes.empty() ? std::string("no TFLOP/s reference for this model") : join(notes, "; ");
  }
  return verdicts;
}

std::optional<BurnPeer> burn_peer(int gpu_index, const nlohmann::json& payload, bool contended) {
  const Expected<protocol::BurnReport> burn = protocol::read_burn(payload);
  const Expected<std::optional<protocol::DeviceDescription>> device =
      protocol::read_device(payload);
  if (!burn || !device || !device.value()) {
    return std::nullopt;
  }
  BurnPeer peer;
  peer.gpu_index = gpu_index;
  peer.model = device.value()->name;
  peer.sm_count = device.value()->sm_count;
  peer.cublas = burn.value().cublas;
  peer.contended = contended;
  peer.types = burn.value().types;
  return peer;
}

namespace {
/// The floor gpu.burn_slow judges each GEMM type's figure by (k_burn_slow_fraction of the
/// model's measured reference at its size), shown beside the figure: from the typed report.
void set_burn_floors(CheckResult& result, const BurnPeer& peer) {
  for (const protocol::BurnType& t : peer.types) {
    const GemmReference* reference = find_gemm_reference(peer.model, t.type, t.n);
    if (reference == nullptr) {
      continue;
    }
    const std::string name = fmt::format("burn_{}_tflops", t.type);
    for (Metric& metric : result.metrics) {
      if (metric.name == name) {
        metric.expected_min = k_burn_slow_fraction * reference->tflops;
        metric.expected = fmt::format("{:g} of {:g} TFLOP/s measured on this model: {}",
                                      k_burn_slow_fraction, reference->tflops, reference->source);
      }
    }
  }
}
} // namespace

void add_peer_verdicts(std::vector<CheckResult>& results, const std::vector<size_t>& slots,
                       const std::vector<BurnPeer>& peers) {
  const std::vector<PeerVerdict> verdicts = judge_burn_peers(peers);
  for (size_t p = 0; p < verdicts.size() && p < slots.size(); ++p) {
    if (slots[p] >= results.size() || results[slots[p]].status == Status::skip) {
      continue;
    }
    CheckResult& result = results[slots[p]];
    set_burn_floors(result, peers[p]);
    for (const Finding& finding : verdicts[p].findings) {
      result.status = worst_of(result.status, status_for(finding.severity));
      result.findings.push_back(finding);
    }
    result.summary += "; " + verdicts[p].note;
  }
}

} // namespace gpucheck::gpu_checks::burn
