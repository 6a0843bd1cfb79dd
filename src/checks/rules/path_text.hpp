#pragma once
/// Small pure helpers over library paths and the version texts they carry (a SONAME's suffix, a
/// driver's branch), shared by the checks. Versions themselves are gpucheck::Version
/// (gpucheck/model/version.hpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/stack_versions.hpp" // cuda_version_text: a CUDA version integer as text
#include "gpucheck/model/version.hpp"

namespace gpucheck::checks {

/// The version suffix of a shared-library file name after "<stem>.so.":
/// ("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "libcuda") -> "580.159.04".
/// Nullopt when the file name has another stem or no numeric suffix.
std::optional<std::string> soname_version(std::string_view path, std::string_view stem);

/// The directory part of a path ("/a/b/libx.so" -> "/a/b"); "." when there is none.
std::string directory_of(std::string_view path);

/// The prefix of `path` up to and including the first component named `component`
/// ("/usr/local/cuda/lib64/stubs/libcuda.so", "stubs") -> "/usr/local/cuda/lib64/stubs".
std::optional<std::string> path_through_component(std::string_view path,
                                                  std::string_view component);

/// The major of a driver branch version ("580.159.04" -> "580"), or "" when not numeric.
std::string driver_branch(std::string_view version);

} // namespace gpucheck::checks
