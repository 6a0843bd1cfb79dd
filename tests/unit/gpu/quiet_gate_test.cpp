// gpu::QuietGate: a timed measurement waits for cuDNN's lane steps under way and holds new ones
// back; a lane step never starts inside a measurement.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gpu/session.hpp"

namespace gpucheck::gpu {
namespace {

using namespace std::chrono_literals;

TEST(QuietGate, AMeasurementWaitsForTheStepUnderWay) {
  QuietGate gate;
  std::atomic<bool> step_over{false};
  auto step = std::make_unique<QuietGate::Step>(gate);
  std::thread lane([&] {
    std::this_thread::sleep_for(50ms);
    step_over = true;
    step.reset();
  });
  {
    const QuietGate::Quiet quiet(gate);
    EXPECT_TRUE(step_over.load()) << "the measurement began beside a lane step";
  }
  lane.join();
}

TEST(QuietGate, NoStepStartsInsideAMeasurementAndStepsGoOnAfterIt) {
  QuietGate gate;
  std::atomic<bool> measuring{true};
  std::atomic<bool> stepped_inside{false};
  std::atomic<int> steps{0};
  auto quiet = std::make_unique<QuietGate::Quiet>(gate);
  std::thread lane([&] {
    for (int i = 0; i < 3; ++i) {
      const QuietGate::Step step(gate);
      stepped_inside = stepped_inside.load() || measuring.load();
      ++steps;
    }
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(steps.load(), 0);
  measuring = false;
  quiet.reset();
  lane.join();
  EXPECT_FALSE(stepped_inside.load());
  EXPECT_EQ(steps.load(), 3);
}

TEST(QuietGate, AWaitingMeasurementGoesBeforeTheNextStep) {
  // Lane threads that step without pause (three threads, overlapping steps) never starve a
  // measurement: once it waits, no new step starts.
  QuietGate gate;
  std::atomic<bool> stop{false};
  std::atomic<bool> measuring{false};
  std::atomic<bool> stepped_inside{false};
  std::vector<std::thread> lanes;
  for (int t = 0; t < 3; ++t) {
    lanes.emplace_back([&] {
      while (!stop.load()) {
        const QuietGate::Step step(gate);
        stepped_inside = stepped_inside.load() || measuring.load();
        std::this_thread::sleep_for(2ms);
      }
    });
  }
  std::this_thread::sleep_for(20ms);
  const auto asked = std::chrono::steady_clock::now();
  {
    const QuietGate::Quiet quiet(gate);
    measuring = true;
    std::this_thread::sleep_for(20ms);
    measuring = false;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 1s);
  stop = true;
  for (std::thread& lane : lanes) {
    lane.join();
  }
  EXPECT_FALSE(stepped_inside.load());
}

} // namespace
} // namespace gpucheck::gpu
