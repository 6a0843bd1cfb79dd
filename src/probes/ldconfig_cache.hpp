#pragma once
/// The dynamic loader's cache as `ldconfig -p` prints it.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "probes/sysroot.hpp"

namespace gpucheck::probes {

struct LdconfigEntry {
  std::string name;  ///< "libcudnn.so.9"
  std::string flags; ///< "libc6,x86-64"
  std::string path;  ///< "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"

  bool operator==(const LdconfigEntry&) const = default;
};

/// Parse `ldconfig -p` output: lines "\tNAME (FLAGS) => PATH", in the printed order (the order
/// the loader searches). The "N libs found in cache" header and malformed lines are skipped.
std::vector<LdconfigEntry> parse_ldconfig_cache(std::string_view text);

/// Whether an entry is for a 64-bit ABI ("x86-64", "AArch64", "64bit"), the only ones a
/// 64-bit gpucheck can load.
bool is_64bit_entry(const LdconfigEntry& entry);

/// The most of `ldconfig -p` read (about 200 000 libraries).
inline constexpr size_t k_loader_cache_max_bytes = size_t{16} << 20;

/// The 64-bit entries of the loader cache: from `ldconfig -p` on the real root (2 s deadline);
/// for any other sysroot (a test fixture) from <root>/etc/ld.so.cache.txt holding `ldconfig -p`
/// text, when present. Empty when neither can be read.
std::vector<LdconfigEntry> read_loader_cache(const Sysroot& root);

} // namespace gpucheck::probes
