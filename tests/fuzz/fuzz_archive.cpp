// The .tar.gz of `--bundle` (src/render/archive.cpp): the ustar writer is ours, the compression
// zlib's. Any member names (within ustar's 100 bytes), contents and modification time: zlib
// inflates the gzip stream to the tar exactly (its CRC-32 and length trailer checked), the gzip
// header carries the clamped time, and each ustar header holds the member's name, size and a
// valid checksum, followed by its data.
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "fuzz_support.hpp"
#include "render/archive.hpp"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz: archive: %s\n", what);
    std::abort();
  }
}

uint64_t octal(std::string_view field) {
  uint64_t value = 0;
  for (const char c : field) {
    if (c < '0' || c > '7') {
      break;
    }
    value = value * 8 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

std::string gunzip(const std::string& gz) {
  z_stream stream{};
  require(inflateInit2(&stream, 16 + MAX_WBITS) == Z_OK, "inflateInit2");
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  stream.avail_in = static_cast<uInt>(gz.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    char buffer[16384];
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  inflateEnd(&stream);
  require(rc == Z_STREAM_END, "zlib does not read the gzip stream to its end");
  require(stream.avail_in == 0, "bytes after the gzip stream");
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gpucheck::render::ArchiveMember;
  std::string_view text = gpucheck::fuzz::as_text(data, size);
  int64_t mtime = 0;
  if (text.size() >= 8) {
    std::memcpy(&mtime, text.data(), 8);
    text.remove_prefix(8);
  }
  std::vector<ArchiveMember> members;
  for (const std::string_view part : gpucheck::fuzz::sections(text, 4)) {
    // The first line names the member: 1 to 100 bytes without NUL (the writer's contract).
    const size_t newline = part.find('\n');
    std::string name(part.substr(0, std::min<size_t>(newline, 100)));
    name.erase(std::remove(name.begin(), name.end(), '\0'), name.end());
    if (name.empty()) {
      name = "member";
    }
    members.push_back(
        {name, std::string(newline == std::string_view::npos ? std::string_view{}
                                                             : part.substr(newline + 1))});
  }
  const std::string tar = gpucheck::render::make_tar(members, mtime);
  require(tar.size() % 512 == 0, "tar size is not a multiple of 512");
  size_t at = 0;
  for (const ArchiveMember& member : members) {
    require(at + 512 <= tar.size(), "tar ends early");
    const std::string_view header(tar.data() + at, 512);
    require(header.substr(0, 100).substr(0, member.name.size()) == member.name &&
                (member.name.size() == 100 || header[member.name.size()] == '\0'),
            "member name");
    require(octal(header.substr(124, 12)) == member.data.size(), "member size");
    uint32_t sum = 0;
    for (size_t i = 0; i < 512; ++i) {
      sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
    }
    require(octal(header.substr(148, 8)) == sum, "header checksum");
    require(header.substr(257, 6) == std::string_view("ustar\0", 6), "ustar magic");
    const uint64_t stamp = octal(header.substr(136, 12));
    require(stamp == static_cast<uint64_t>(std::clamp<int64_t>(mtime, 0, 077777777777LL)),
            "modification time (clamped to the field's 11 octal digits)");
    at += 512;
    require(tar.compare(at, member.data.size(), member.data) == 0, "member data");
    at += (member.data.size() + 511) / 512 * 512;
  }
  require(tar.size() == at + 1024, "two zero blocks end the archive");
  const std::string gz = gpucheck::render::make_gzip(tar, mtime);
  require(gunzip(gz) == tar, "zlib inflates something else");
  require(gz.size() >= 10 && gz.compare(0, 3, "\x1f\x8b\x08") == 0, "gzip magic and method");
  uint32_t stamp = 0;
  for (int i = 3; i >= 0; --i) {
    stamp = (stamp << 8) | static_cast<unsigned char>(gz[4 + static_cast<size_t>(i)]);
  }
  require(stamp == static_cast<uint32_t>(std::clamp<int64_t>(mtime, 0, 0xffffffffLL)),
          "gzip time (clamped to 32 bits)");
  return 0;
}
