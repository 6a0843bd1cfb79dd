#pragma once
/// A .tar.gz: POSIX ustar members (written here) inside a gzip stream that zlib compresses.
/// `tar -xzf`, `gzip -t` and Python's tarfile read it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::render {

/// One regular file in the archive.
struct ArchiveMember {
  std::string name; ///< relative path, at most 100 bytes ("gpucheck-bundle/report.md")
  std::string data;
};

/// The members as a ustar archive (512-byte headers, data padded to 512, two zero blocks at the
/// end). Files are mode 0644, owner 0:0 "root", modified at `mtime_s` (seconds since 1970).
/// A name longer than 100 bytes or empty is a broken invariant: std::invalid_argument.
std::string make_tar(const std::vector<ArchiveMember>& members, int64_t mtime_s);

/// `data` as one gzip member (RFC 1952) compressed by zlib at its best level, modified at
/// `mtime_s` (clamped to the header's 32 bits, OS "Unix", no file name): the same bytes in give
/// the same bytes out. zlib failing (out of memory) is a broken invariant: std::runtime_error.
std::string make_gzip(std::string_view data, int64_t mtime_s);

} // namespace gpucheck::render
