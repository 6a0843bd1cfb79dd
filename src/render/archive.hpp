#pragma once
/// A .tar.gz written without a compression library: POSIX ustar members inside a gzip stream of
/// stored (uncompressed) deflate blocks, checked by CRC-32. `tar -xzf` and `gzip -t` read it.

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

/// `data` as a gzip stream (RFC 1952) of stored deflate blocks (RFC 1951, BTYPE 00).
std::string make_gzip(std::string_view data, int64_t mtime_s);

/// CRC-32 (ISO-HDLC, as gzip and zlib use it) of `data`.
uint32_t crc32(std::string_view data);

} // namespace gpucheck::render
