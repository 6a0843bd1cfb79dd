// --quick, --level, --duration and --force together; the long level's progress line.

#include <gtest/gtest.h>

#include "cli/options.hpp"
#include "cli/progress.hpp"

namespace gpucheck::cli {
namespace {

TEST(CliLevel, Resolution) {
  RunOptions options;
  EXPECT_EQ(resolve_level(options).value(), Level::standard);
  options.quick = true;
  EXPECT_EQ(resolve_level(options).value(), Level::quick);
  options.level_name = "quick";
  EXPECT_EQ(resolve_level(options).value(), Level::quick);
  options.level_name = "long";
  EXPECT_FALSE(resolve_level(options)); // --quick --level long contradict
  options.quick = false;
  EXPECT_EQ(resolve_level(options).value(), Level::long_);
  options.duration_s = 5;
  options.force = true;
  EXPECT_EQ(resolve_level(options).value(), Level::long_);
  options.level_name = "standard";
  const Expected<Level> wrong = resolve_level(options);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("--duration"), std::string::npos);
  options.duration_s.reset();
  ASSERT_FALSE(resolve_level(options));
  EXPECT_NE(resolve_level(options).error().message.find("--force"), std::string::npos);
  options.force = false;
  options.level_name = "longer";
  ASSERT_FALSE(resolve_level(options));
  EXPECT_NE(resolve_level(options).error().message.find("'longer'"), std::string::npos);
}

TEST(CliLevel, LevelNames) {
  EXPECT_EQ(to_string(Level::long_), "long");
  EXPECT_EQ(level_named("standard"), Level::standard);
  EXPECT_FALSE(level_named("Long").has_value());
}

TEST(CliLevel, ProgressText) {
  engine::Scheduler::Progress p;
  p.phase = "burn";
  p.gpus = 2;
  p.elapsed_s = 12.7;
  p.total_s = 60;
  EXPECT_EQ(progress_text(p), "gpucheck: long level: burn on 2 GPUs, 12 s of 60 s");
  p.phase = "memory test";
  p.gpus = 1;
  p.elapsed_s = 75; // a phase past its duration (the last pattern finishing) shows the total
  EXPECT_EQ(progress_text(p), "gpucheck: long level: memory test on 1 GPU, 60 s of 60 s");
}

} // namespace
} // namespace gpucheck::cli
