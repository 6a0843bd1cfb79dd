#pragma once
/// Where a CUDA toolkit states its version, read without running anything: version.json
/// (CUDA >= 11.1), version.txt (older), or the wheel metadata of a toolkit assembled from pip
/// wheels (dist-info/nvidia_cuda_nvcc-13.0.88.dist-info); and nvcc's own banner as a last resort.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/sysroot.hpp"

namespace gpucheck::probes {

/// The "version" of `component` ("cuda_nvcc", "cuda") in a toolkit's version.json text.
std::optional<std::string> parse_version_json(std::string_view text, std::string_view component);

/// "CUDA Version 11.0.228" (version.txt) -> "11.0.228".
std::optional<std::string> parse_version_txt(std::string_view text);

/// nvcc --version output ("Cuda compilation tools, release 13.0, V13.0.88") -> "13.0.88"
/// (or "13.0" when only the release is printed).
std::optional<std::string> parse_nvcc_version_output(std::string_view text);

/// The version in a dist-info directory name whose distribution is `base` or `base_cuNN`:
/// ("nvidia_cuda_nvcc-13.0.88.dist-info", "nvidia_cuda_nvcc") -> "13.0.88".
std::optional<std::string> dist_info_version(std::string_view dir_name, std::string_view base);

/// Version of distribution `base` among the *.dist-info entries of `dir` (a site-packages or a
/// wheel-assembled toolkit's dist-info folder). When several match, the one whose RECORD lists a
/// file named `file_name` wins; nullopt when none matches or the choice stays ambiguous.
std::optional<std::string> find_dist_info_version(const Sysroot& root, const std::string& dir,
                                                  std::string_view base,
                                                  std::string_view file_name = {});

/// The toolkit version in `toolkit_dir` (a system path): version.json's cuda_nvcc (else cuda),
/// version.txt, then dist-info's nvidia_cuda_nvcc. nullopt when none is readable.
std::optional<std::string> read_toolkit_version(const Sysroot& root,
                                                const std::string& toolkit_dir);

} // namespace gpucheck::probes
