#pragma once
/// POSIX ACLs for tests, written as the kernel's extended attribute (no libacl needed).

#include <sys/xattr.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace gpucheck::testing {

inline constexpr unsigned k_acl_user = 0x02;  ///< ACL_USER
inline constexpr unsigned k_acl_group = 0x08; ///< ACL_GROUP

/// Give `path` an access ACL: the owner rwx, `tag` (0x02 a user, 0x08 a group) `id` with
/// `perm`, the owning group r-x, mask rwx, others r-x. False where the file system has no ACLs.
inline bool set_acl(const std::string& path, unsigned tag, uint32_t id, unsigned perm) {
  std::string raw;
  const auto put16 = [&raw](unsigned v) {
    raw += static_cast<char>(v & 0xff);
    raw += static_cast<char>((v >> 8) & 0xff);
  };
  const auto put32 = [&raw](uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      raw += static_cast<char>((v >> (8 * i)) & 0xff);
    }
  };
  put32(2);
  std::vector<std::tuple<unsigned, unsigned, uint32_t>> entries{{0x01, 7, 0xffffffff},
                                                                {tag, perm, id},
                                                                {0x04, 5, 0xffffffff},
                                                                {0x10, 7, 0xffffffff},
                                                                {0x20, 5, 0xffffffff}};
  std::sort(entries.begin(), entries.end()); // the kernel wants them in the tags' order
  for (const auto& [t, p, i] : entries) {
    put16(t);
    put16(p);
    put32(i);
  }
  return ::setxattr(path.c_str(), "system.posix_acl_access", raw.data(), raw.size(), 0) == 0;
}

} // namespace gpucheck::testing
