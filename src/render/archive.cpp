#include "render/archive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace gpucheck::render {

namespace {

constexpr size_t k_block = 512;
constexpr size_t k_name_size = 100;
constexpr int64_t k_max_octal_11 = 077777777777; // the largest value of an 11-digit field
constexpr size_t k_stored_block_max = 65535;     // LEN of a stored deflate block is 16 bits

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

void put_le32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    out += static_cast<char>((value >> (8 * i)) & 0xffU);
  }
}

} // namespace

uint32_t crc32(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) {
        c = (c & 1U) != 0 ? 0xedb88320U ^ (c >> 1) : c >> 1;
      }
      t[n] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffU;
  for (const char ch : data) {
    crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xffU] ^ (crc >> 8);
  }
  return crc ^ 0xffffffffU;
}

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
  std::string out = {'\x1f', '\x8b', '\x08', '\x00'}; // magic, deflate, no flags
  put_le32(out, static_cast<uint32_t>(std::clamp<int64_t>(mtime_s, 0, 0xffffffff)));
  out += '\x00'; // extra flags
  out += '\x03'; // OS: Unix
  size_t offset = 0;
  do {
    const size_t length = std::min(k_stored_block_max, data.size() - offset);
    const bool final_block = offset + length == data.size();
    out += static_cast<char>(final_block ? 1 : 0); // BFINAL, BTYPE 00, padding to the byte
    const auto len = static_cast<uint16_t>(length);
    const auto nlen = static_cast<uint16_t>(~len);
    out += static_cast<char>(len & 0xffU);
    out += static_cast<char>(len >> 8);
    out += static_cast<char>(nlen & 0xffU);
    out += static_cast<char>(nlen >> 8);
    out.append(data.substr(offset, length));
    offset += length;
  } while (offset < data.size());
  put_le32(out, crc32(data));
  put_le32(out, static_cast<uint32_t>(data.size() & 0xffffffffU));
  return out;
}

} // namespace gpucheck::render
