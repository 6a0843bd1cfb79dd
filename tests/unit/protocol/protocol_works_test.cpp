// The one work table (protocol/works.hpp): where a check of its own folder's work goes, and what
// add_work() refuses (before it changes the table).
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "protocol/works.hpp"

namespace gpucheck::protocol {
namespace {

Work cudnn() {
  return *work_named("cudnn");
}

size_t at(Work work) {
  const std::span<const WorkRow> table = work_table();
  return static_cast<size_t>(std::find_if(table.begin(), table.end(),
                                          [work](const WorkRow& r) { return r.work == work; }) -
                             table.begin());
}

TEST(ProtocolWorks, AddedWorksGoBeforeTheCopiesOrLastInTheLongLevel) {
  // The test main installed src/gpu_checks/: compute first, the memory test then the burn in the
  // long level's child, after every standard work.
  const std::optional<Work> compute = work_named("compute");
  const std::optional<Work> memtest = work_named("memtest");
  const std::optional<Work> burn = work_named("burn");
  ASSERT_TRUE(compute && memtest && burn);
  EXPECT_EQ(at(*compute), 0U);
  EXPECT_LT(at(*compute), at(*work_named("bandwidth")));
  EXPECT_GT(at(*memtest), at(*work_named("nccl")));
  EXPECT_EQ(at(*memtest) + 1, at(*burn));
  EXPECT_EQ(at(*burn) + 1, work_table().size());
  EXPECT_EQ(work_row(*memtest).child, WorkChild::long_level);
  EXPECT_EQ(work_row(*memtest).phase, "memory test");
  EXPECT_EQ(work_row(*burn).phase, "burn");
  EXPECT_TRUE(work_row(*burn).together);
  EXPECT_FALSE(work_row(*memtest).together);
  // cuDNN's is the one lane, the last work of the shared child.
  for (const WorkRow& row : work_table()) {
    EXPECT_EQ(is_lane(row.work), row.work == cudnn()) << row.name;
    if (row.child == WorkChild::shared) {
      EXPECT_LE(at(row.work), at(cudnn())) << row.name;
    }
  }
  EXPECT_EQ(work_row(cudnn()).lane, "cuDNN");
}

TEST(ProtocolWorks, AddWorkRefusesASpanningWorkALaneAndARepeatedName) {
  const size_t before = work_table().size();
  EXPECT_THROW(add_work({Work{}, "spanning_test", "gpu.spanning_test", "gpu-spanning-test",
                         WorkChild::spanning, 1, 1, 1}),
               std::logic_error);
  // A shared child has one lane at most, and it is cuDNN's.
  EXPECT_THROW(add_work({Work{},
                         "lane_test",
                         "gpu.lane_test",
                         "gpu-lane-test",
                         WorkChild::shared,
                         1,
                         1,
                         1,
                         {},
                         false,
                         "a test lane"}),
               std::logic_error);
  EXPECT_THROW(
      add_work({Work{}, "compute", "gpu.other_test", "gpu-other-test", WorkChild::shared, 1, 1, 1}),
      std::logic_error);
  EXPECT_EQ(work_table().size(), before);
}

TEST(ProtocolWorks, SpanningWorksRunInTheirChildBetweenTheSharedAndTheLongLevel) {
  // A spanning work with a mode of its own is refused: it runs in gpu-peers.
  const size_t before = work_table().size();
  EXPECT_THROW(add_work({Work{}, "span_test", "gpu.span_test", "gpu-span-test", WorkChild::spanning,
                         1, 1, 1}),
               std::logic_error);
  EXPECT_EQ(work_table().size(), before);
  EXPECT_EQ(spanning_child_mode(), "gpu-peers");
  // gpu.p2p's then gpu.nccl's, after every shared child's work, before the long level's.
  const Work peers = *work_named("peers");
  const Work nccl = *work_named("nccl");
  EXPECT_EQ(at(nccl), at(peers) + 1);
  EXPECT_EQ(at(peers), at(cudnn()) + 1);
  EXPECT_EQ(at(*work_named("memtest")), at(nccl) + 1);
  EXPECT_EQ(work_row(peers).mode, "");
  EXPECT_TRUE(work_row(nccl).beyond_budget);
}

TEST(ProtocolWorks, ACheckHasOneFirstWorkAndItsPartsFollowItWithoutAMode) {
  const size_t before = work_table().size();
  const auto row = [](std::string_view name, std::string_view check, std::string_view mode,
                      bool part) {
    WorkRow r{Work{}, name, check, mode, WorkChild::shared, 1, 1, 1};
    r.copies = Copies::device_local;
    r.part = part;
    return r;
  };
  // A second first work of gpu.bandwidth, a part with a mode of its own, a part of no check.
  EXPECT_THROW(add_work(row("part_test", "gpu.bandwidth", "", false)), std::logic_error);
  EXPECT_THROW(add_work(row("part_test", "gpu.bandwidth", "gpu-part-test", true)),
               std::logic_error);
  EXPECT_THROW(add_work(row("part_test", "gpu.part_test", "", true)), std::logic_error);
  EXPECT_EQ(work_table().size(), before);
  // gpu.bandwidth's parts follow its first work, the works that copy after those that do not,
  // all before the lane.
  const Work host = *work_named("bandwidth");
  EXPECT_EQ(at(*work_named("copies_together")), at(host) + 1);
  EXPECT_EQ(at(*work_named("local_copies")), at(host) + 2);
  EXPECT_EQ(at(cudnn()), at(host) + 3);
  for (const WorkRow& r : work_table()) {
    if (r.child == WorkChild::shared && r.copies == Copies::none && r.lane.empty()) {
      EXPECT_LT(at(r.work), at(host)) << r.name;
    }
  }
}

} // namespace
} // namespace gpucheck::protocol
