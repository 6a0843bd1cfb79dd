#include "render/archive.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace gpucheck::render {

namespace {

constexpr size_t k_block = 512;
constexpr size_t k_name_size = 100;
constexpr int64_t k_max_octal_11 = 077777777777;    // the largest value of an 11-digit field
constexpr size_t k_deflate_slice = size_t{1} << 30; // input given to zlib at a time

/// An octal field of `width` bytes: digits padded with zeros, then a NUL.
void put_octal(std::string& header, size_t offset, size_t width, uint64_t value) {
  const std::string digits = fmt::format("{:0{}o}", value, width - 1);
  std::copy(digits.begin(), digits.end(), header.begin() + static_cast<std::ptrdiff_t>(offset));
}

void put_text(std::string& header, size_t offset, std::string_view text) {
  std::copy(text.begin(), text.end(), header.begin() + static_cast<std::ptrdiff_t>(offset));
}

std::string tar_header(const ArchiveMember& member, int64_t mtime_s) {
  std::string header(k_block, '\0');
  put_text(header, 0, member.name);               // name
  put_octal(header, 100, 8, 0644);                // mode
  put_octal(header, 108, 8, 0);                   // uid
  put_octal(header, 116, 8, 0);                   // gid
  put_octal(header, 124, 12, member.data.size()); // size
  // 11 octal digits hold times up to the year 2242; a later (or negative) clock is clamped, not
  // written over the next field (found by fuzz_archive).
  put_octal(header, 136, 12,
            static_cast<uint64_t>(std::clamp<int64_t>(mtime_s, 0, k_max_octal_11)));
  header[156] = '0';                                     // typeflag: regular file
  put_text(header, 257, std::string_view("ustar\0", 6)); // magic
  put_text(header, 263, "00");                           // version
  put_text(header, 265, "root");                         // uname
  put_text(header, 297, "root");                         // gname
  // The checksum is the byte sum of the header with the checksum field read as spaces.
  std::fill(header.begin() + 148, header.begin() + 156, ' ');
  uint32_t sum = 0;
  for (const char c : header) {
    sum += static_cast<unsigned char>(c);
  }
  const std::string checksum = fmt::format("{:06o}", sum);
  put_text(header, 148, checksum);
  header[154] = '\0';
  header[155] = ' ';
  return header;
}

} // namespace

std::string make_tar(const std::vector<ArchiveMember>& members, int64_t mtime_s) {
  std::string out;
  for (const ArchiveMember& member : members) {
    if (member.name.empty() || member.name.size() > k_name_size) {
      throw std::invalid_argument(
          fmt::format("tar member name '{}' is empty or too long", member.name));
    }
    out += tar_header(member, mtime_s);
    out += member.data;
    out.append((k_block - member.data.size() % k_block) % k_block, '\0');
  }
  out.append(2 * k_block, '\0');
  return out;
}

std::string make_gzip(std::string_view data, int64_t mtime_s) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper (header, CRC-32 and length trailer) around the deflate
  // stream.
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  gz_header header{};
  header.time = static_cast<uLong>(std::clamp<int64_t>(mtime_s, 0, 0xffffffff));
  header.os = 3; // Unix
  deflateSetHeader(&stream, &header);
  std::string out;
  std::array<char, 65536> buffer{};
  size_t offset = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    // avail_in is 32 bits: a larger input is fed in slices.
    if (stream.avail_in == 0 && offset < data.size()) {
      const size_t slice = std::min(k_deflate_slice, data.size() - offset);
      // zlib's next_in is not const-qualified but is never written through.
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + offset));
      stream.avail_in = static_cast<uInt>(slice);
      offset += slice;
    }
    stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
    stream.avail_out = static_cast<uInt>(buffer.size());
    rc = deflate(&stream, offset == data.size() ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      deflateEnd(&stream);
      throw std::runtime_error(fmt::format("zlib: deflate failed ({})", rc));
    }
    out.append(buffer.data(), buffer.size() - stream.avail_out);
  }
  deflateEnd(&stream);
  return out;
}

} // namespace gpucheck::render
