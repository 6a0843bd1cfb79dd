// The inventory the text and Markdown reports share (render/inventory.hpp): each library
// family's state, the copy its line names, the GPUs' links and memory; and both renderers'
// words for each state.
#include <gtest/gtest.h>

#include "render/inventory.hpp"
#include "render/markdown.hpp"
#include "render/text.hpp"

namespace gpucheck::testing {
namespace {

using render::Inventory;
using render::LibraryState;
using render::make_inventory;

LibraryCopy copy_at(std::string path, std::string version) {
  LibraryCopy copy;
  copy.real_path = path;
  copy.path = std::move(path);
  copy.origin = "ldconfig";
  copy.version = std::move(version);
  return copy;
}

SystemSnapshot with_library(LibraryFamily family) {
  SystemSnapshot snapshot;
  snapshot.libraries.push_back(std::move(family));
  return snapshot;
}

TEST(Inventory, EachLibraryStateAndTheCopyItsLineNames) {
  LibraryFamily loaded{.family = "cudnn"};
  loaded.load = {.name = "libcudnn.so.9",
                 .loaded = true,
                 .path = "/b/libcudnn.so.9",
                 .real_path = "/b/libcudnn.so.9.19.0",
                 .version = "9.19.0"};
  loaded.copies = {copy_at("/a/libcudnn.so.9", "9.1.0"), copy_at("/b/libcudnn.so.9", "9.19.0")};
  loaded.copies[1].real_path = "/b/libcudnn.so.9.19.0";
  loaded.copies[0].reported_version = "9.1.1"; // what it says beats its file name
  loaded.cudnn = CudnnDetails{.cudart_version = 13010};
  Inventory inventory = make_inventory(with_library(loaded));
  ASSERT_EQ(inventory.libraries.size(), 1U);
  const render::LibraryView& view = inventory.libraries.front();
  EXPECT_EQ(view.label, "cuDNN");
  EXPECT_EQ(view.state, LibraryState::loaded);
  EXPECT_EQ(view.path, "/b/libcudnn.so.9");
  EXPECT_EQ(view.built_for_cuda, 13010);
  ASSERT_EQ(view.copies.size(), 2U);
  EXPECT_FALSE(view.copies[0].named_by_family);
  EXPECT_EQ(view.copies[0].version, "9.1.1");
  EXPECT_TRUE(view.copies[1].named_by_family);

  // --quick: on disk, not loaded on purpose; the first copy is the one its line names.
  LibraryFamily quick{.family = "nccl", .copies = {copy_at("/n/libnccl.so.2", "2.28.3")}};
  inventory = make_inventory(with_library(quick));
  EXPECT_EQ(inventory.libraries[0].state, LibraryState::not_loaded_in_this_mode);
  EXPECT_TRUE(inventory.libraries[0].copies[0].named_by_family);
  EXPECT_EQ(inventory.libraries[0].label, "NCCL");

  LibraryFamily broken = quick;
  broken.load = {.name = "libnccl.so.2", .error = "undefined symbol: ncclFoo"};
  inventory = make_inventory(with_library(broken));
  EXPECT_EQ(inventory.libraries[0].state, LibraryState::does_not_load);
  EXPECT_FALSE(inventory.libraries[0].copies[0].named_by_family);

  LibraryFamily absent{.family = "cublas"};
  absent.load = {.name = "libcublas.so.13", .error = "libcublas.so.13: cannot open shared object"};
  inventory = make_inventory(with_library(absent));
  EXPECT_EQ(inventory.libraries[0].state, LibraryState::not_found);

  // A probe that failed names no copy, even one on disk.
  LibraryFamily failed = quick;
  failed.failure =
      ChildFailure{ChildFailureKind::signal, 11, "SIGSEGV", 0, 0.0, "killed by SIGSEGV", ""};
  inventory = make_inventory(with_library(failed));
  EXPECT_EQ(inventory.libraries[0].state, LibraryState::probe_failed);
  EXPECT_FALSE(inventory.libraries[0].copies[0].named_by_family);
}

TEST(Inventory, GpusModulesContainerAndMemory) {
  SystemSnapshot snapshot;
  snapshot.kernel_module.nvidia_loaded = true;
  snapshot.kernel_module.nouveau_loaded = true;
  snapshot.environment.container.kind = "none";
  snapshot.host.memory_total_bytes = 64ULL << 30;
  GpuInfo gpu;
  gpu.memory_total_bytes = 81559ULL << 20;
  gpu.pcie_gen_current = 5;
  gpu.pcie_width_current = 16;
  gpu.pcie_gen_max = 5; // width at best unknown: no best link
  gpu.cc_major = 9;
  snapshot.gpus.push_back(gpu);
  GpuInfo bare;
  snapshot.gpus.push_back(bare);
  Inventory inventory = make_inventory(snapshot);
  EXPECT_EQ(inventory.modules, "nvidia loaded, nvidia_uvm absent, nouveau loaded");
  EXPECT_FALSE(inventory.in_container());
  EXPECT_EQ(inventory.host_memory_gib, 64U);
  ASSERT_EQ(inventory.gpus.size(), 2U);
  EXPECT_EQ(inventory.gpus[0].memory_mib, 81559U);
  EXPECT_EQ(inventory.gpus[0].pcie_current, (std::pair{5, 16}));
  EXPECT_FALSE(inventory.gpus[0].pcie_max.has_value());
  EXPECT_EQ(inventory.gpus[0].compute_capability, "9.0");
  EXPECT_FALSE(inventory.gpus[1].memory_mib.has_value());
  EXPECT_FALSE(inventory.gpus[1].pcie_current.has_value());
  EXPECT_FALSE(inventory.gpus[1].compute_capability.has_value());
  snapshot.environment.container.kind = "docker";
  EXPECT_TRUE(make_inventory(snapshot).in_container());
}

/// The text report's line for the first library of `snapshot`, and the Markdown report's cell.
TEST(Inventory, BothReportsWordEachState) {
  Report report;
  LibraryFamily quick{.family = "nccl", .copies = {copy_at("/n/libnccl.so.2", "2.28.3")}};
  report.snapshot = with_library(quick);
  EXPECT_NE(render::render_text(report, {}).find("2.28.3 on disk, not loaded in this mode"),
            std::string::npos);
  EXPECT_NE(render::render_markdown(report).find("| nccl | not loaded in this mode |"),
            std::string::npos);
  // Nothing on disk and nothing asked for (--quick): "not found" in both (the Markdown report
  // said "not loaded in this mode", as if a copy were there).
  report.snapshot = with_library(LibraryFamily{.family = "nccl"});
  EXPECT_NE(render::render_text(report, {}).find("NCCL      not found"), std::string::npos);
  EXPECT_NE(render::render_markdown(report).find("| nccl | not found | - |"), std::string::npos);
  // Nothing on disk and the load failed: Markdown quotes the loader.
  LibraryFamily absent{.family = "nccl"};
  absent.load = {.name = "libnccl.so.2", .error = "libnccl.so.2: cannot open shared object file"};
  report.snapshot = with_library(absent);
  EXPECT_NE(render::render_markdown(report).find(
                "| nccl | does not load: libnccl.so.2: cannot open shared object file | - |"),
            std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
