#include "protocol/works.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace gpucheck::protocol {

namespace {
/// The works added at start-up, in order.
std::vector<WorkRow>& table() {
  static std::vector<WorkRow> rows;
  return rows;
}
} // namespace

std::span<const WorkRow> work_table() {
  return table();
}

Work add_work(WorkRow row) {
  std::vector<WorkRow>& rows = table();
  for (const WorkRow& other : rows) {
    if (other.name == row.name || (other.check == row.check && !row.part) ||
        (!row.mode.empty() && other.mode == row.mode)) {
      throw std::logic_error(fmt::format("work '{}' ({}, {}) repeats work '{}'", row.name,
                                         row.check, row.mode, other.name));
    }
  }
  if (row.part && (!row.mode.empty() ||
                   std::none_of(rows.begin(), rows.end(),
                                [&row](const WorkRow& r) { return r.check == row.check; }))) {
    throw std::logic_error(fmt::format(
        "work '{}': a check's further part follows its first work and has no mode", row.name));
  }
  if (!row.lane.empty() &&
      (row.child != WorkChild::shared ||
       std::any_of(rows.begin(), rows.end(), [](const WorkRow& r) { return !r.lane.empty(); }))) {
    throw std::logic_error(fmt::format(
        "work '{}': a lane is a shared child's, and that child has one at most", row.name));
  }
  if (row.child == WorkChild::spanning && !row.mode.empty()) {
    throw std::logic_error(
        fmt::format("work '{}': a spanning work runs in {}, not a mode of its own", row.name,
                    spanning_child_mode()));
  }
  uint8_t next = 0;
  for (const WorkRow& other : rows) {
    next = std::max<uint8_t>(next, static_cast<uint8_t>(other.work.id + 1));
  }
  row.work = Work{next};
  // A shared child's: after the works added earlier, those without copies before those with,
  // its lane after them all; then the spanning child's; a long level's: last.
  const auto first = [&rows](auto&& pred) { return std::find_if(rows.begin(), rows.end(), pred); };
  const auto not_shared = [](const WorkRow& r) { return r.child != WorkChild::shared; };
  const auto lane_or_after = [](const WorkRow& r) {
    return r.child != WorkChild::shared || !r.lane.empty();
  };
  const auto copies_or_after = [](const WorkRow& r) {
    return r.child != WorkChild::shared || !r.lane.empty() || r.copies != Copies::none;
  };
  const auto long_level = [](const WorkRow& r) { return r.child == WorkChild::long_level; };
  const auto at = row.child == WorkChild::long_level ? rows.end()
                  : row.child == WorkChild::spanning ? first(long_level)
                  : !row.lane.empty()                ? first(not_shared)
                  : row.copies != Copies::none       ? first(lane_or_after)
                                                     : first(copies_or_after);
  rows.insert(at, row);
  return row.work;
}

const WorkRow& work_row(Work work) {
  for (const WorkRow& row : table()) {
    if (row.work == work) {
      return row;
    }
  }
  static const WorkRow none{};
  return none; // unreachable: every Work has its row (tested)
}

bool is_lane(Work work) {
  return !work_row(work).lane.empty();
}

std::string_view child_mode(Work work) {
  return work_row(work).mode;
}

std::string_view shared_child_mode() {
  return "gpu-device";
}

std::string_view spanning_child_mode() {
  return "gpu-peers";
}

std::string_view work_name(Work work) {
  return work_row(work).name;
}

std::optional<Work> work_named(std::string_view name) {
  for (const WorkRow& row : table()) {
    if (row.name == name) {
      return row.work;
    }
  }
  return std::nullopt;
}

std::string_view check_id(Work work) {
  return work_row(work).check;
}

std::optional<Work> work_for_check(std::string_view check) {
  for (const WorkRow& row : table()) {
    if (row.check == check) {
      return row.work;
    }
  }
  return std::nullopt;
}

} // namespace gpucheck::protocol
