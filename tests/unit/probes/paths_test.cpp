#include "probes/paths.hpp"

#include <gtest/gtest.h>

#include "support/fixture_tree.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;

TEST(Paths, LexicalHelpers) {
  EXPECT_EQ(join_path("/usr/lib/", "/libcuda.so.1"), "/usr/lib/libcuda.so.1");
  EXPECT_EQ(join_path("/", "etc"), "/etc");
  EXPECT_EQ(parent_path("/a/b/c"), "/a/b");
  EXPECT_EQ(parent_path("/a"), "/");
  EXPECT_EQ(base_name("/a/b/c.so/"), "c.so");
  EXPECT_EQ(normalize_path("//a/./b/../c/"), "/a/c");
  EXPECT_EQ(normalize_path("/../.."), "/");
}

TEST(Paths, ResolveKeepsAbsoluteLinksInsideTheRoot) {
  FixtureTree tree;
  tree.file("/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127")
      .symlink("/usr/local/cuda", "/usr/local/cuda-12.4")
      .symlink("/usr/local/cuda-12.4/lib", "lib64")
      .symlink("/usr/local/cuda-12.4/lib64/libcudart.so.12", "libcudart.so.12.4.127")
      .symlink("/loop/a", "b")
      .symlink("/loop/b", "/loop/a")
      .symlink("/dangling", "/nowhere/else");
  const Sysroot root(tree.root());
  EXPECT_EQ(resolve_path(root, "/usr/local/cuda/lib/libcudart.so.12"),
            "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127");
  EXPECT_EQ(resolve_path(root, "/usr/local/cuda/lib/../bin"), std::nullopt); // no bin
  EXPECT_EQ(resolve_path(root, "/usr/local/cuda/lib/.."), "/usr/local/cuda-12.4");
  EXPECT_EQ(resolve_path(root, "/loop/a"), std::nullopt);
  EXPECT_EQ(resolve_path(root, "/dangling"), std::nullopt);
  EXPECT_EQ(resolve_path(root, "/"), "/");

  const PathStat through_link = stat_path(root, "/usr/local/cuda/lib64/libcudart.so.12");
  EXPECT_TRUE(through_link.exists);
  EXPECT_TRUE(through_link.is_symlink);
  EXPECT_TRUE(through_link.is_regular);
  EXPECT_EQ(through_link.mode, 0644U);
  EXPECT_FALSE(stat_path(root, "/dangling").exists);
  EXPECT_TRUE(stat_path(root, "/dangling").is_symlink);
  EXPECT_EQ(list_resolved(root, "/usr/local/cuda/lib"),
            (std::vector<std::string>{"libcudart.so.12", "libcudart.so.12.4.127"}));
  EXPECT_TRUE(list_resolved(root, "/loop/a").empty());
}

TEST(Paths, ReadAttributeAndReadResolved) {
  FixtureTree tree;
  tree.file("/sys/dev/attr", "  16.0 GT/s PCIe \nsecond line\n")
      .file("/sys/dev/empty", "")
      .symlink("/sys/link", "/sys/dev");
  const Sysroot root(tree.root());
  EXPECT_EQ(read_attribute(root, "/sys/link/attr"), "16.0 GT/s PCIe");
  EXPECT_EQ(read_attribute(root, "/sys/link/empty"), "");
  EXPECT_EQ(read_attribute(root, "/sys/link/missing"), std::nullopt);
  EXPECT_EQ(read_resolved(root, "/sys/link/attr"), "  16.0 GT/s PCIe \nsecond line\n");
  EXPECT_EQ(read_resolved(root, "/sys/link/missing"), std::nullopt);
}

} // namespace
} // namespace gpucheck::probes
