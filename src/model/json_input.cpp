#include "gpucheck/model/json_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpucheck {

namespace {

/// Builds the document like nlohmann's own DOM parser, and knows at each moment the JSON path of
/// the value being read, so that an error can say where it is.
class PathTrackingSax {
public:
  using json = nlohmann::json;

  explicit PathTrackingSax(size_t max_depth) : m_max_depth(max_depth) {}

  bool null() { return place(nullptr); }
  bool boolean(bool value) { return place(value); }
  bool number_integer(json::number_integer_t value) { return place(value); }
  bool number_unsigned(json::number_unsigned_t value) { return place(value); }
  bool number_float(json::number_float_t value, const json::string_t& /*text*/) {
    return place(value);
  }
  bool string(json::string_t& value) { return place(std::move(value)); }
  bool binary(json::binary_t& value) { return place(json::binary(std::move(value))); }

  bool start_object(std::size_t /*elements*/) { return open(json::object()); }
  bool key(json::string_t& name) {
    m_levels.back().key = name;
    return true;
  }
  bool end_object() {
    m_levels.pop_back();
    return true;
  }
  bool start_array(std::size_t /*elements*/) { return open(json::array()); }
  bool end_array() {
    m_levels.pop_back();
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error) {
    std::string what = error.what();
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'": keep the plain part.
    if (const size_t bracket = what.find("] ");
        what.starts_with("[json.") && bracket != std::string::npos) {
      what = what.substr(bracket + 2);
    }
    // "...; last read: 'root:x:0:0'" quotes the input itself, which may be a file another user
    // linked in (/etc/shadow): the place is said, never the bytes.
    if (const size_t quoted = what.find("; last read: "); quoted != std::string::npos) {
      what.resize(quoted);
    }
    (void)last_token;
    m_error = fmt::format("at {} (byte {}): {}", path(), position, what);
    return false;
  }

  [[nodiscard]] const std::string& error() const { return m_error; }
  json& result() { return m_root; }

private:
  struct Level {
    json* container = nullptr;
    std::string key; ///< objects: the key whose value comes next
  };

  /// Where the next value goes, as "$.a.b[3]".
  [[nodiscard]] std::string path() const {
    constexpr size_t k_max_shown = 160;
    std::string out = "$";
    for (size_t i = 0; i < m_levels.size(); ++i) {
      const Level& level = m_levels[i];
      if (level.container->is_array()) {
        // An outer array's current element is its last; the innermost one's is the next.
        const size_t size = level.container->size();
        const bool innermost = i + 1 == m_levels.size();
        out += fmt::format("[{}]", innermost || size == 0 ? size : size - 1);
      } else {
        out += "." + level.key;
      }
    }
    if (out.size() > k_max_shown) {
      out = out.substr(0, k_max_shown / 2) + "..." + out.substr(out.size() - k_max_shown / 2);
    }
    return out;
  }

  json* slot() {
    if (m_levels.empty()) {
      return &m_root;
    }
    Level& level = m_levels.back();
    if (level.container->is_array()) {
      level.container->push_back(nullptr);
      return &level.container->back();
    }
    return &(*level.container)[level.key];
  }

  template <typename T> bool place(T&& value) {
    *slot() = json(std::forward<T>(value));
    return true;
  }

  bool open(json container) {
    if (m_levels.size() >= m_max_depth) {
      m_error = fmt::format("at {}: nested deeper than {} levels", path(), m_max_depth);
      return false;
    }
    json* at = slot();
    *at = std::move(container);
    m_levels.push_back(Level{at, {}});
    return true;
  }

  size_t m_max_depth;
  json m_root;
  std::vector<Level> m_levels;
  std::string m_error;
};

} // namespace

Expected<std::string> read_input_file(const std::string& path, size_t max_bytes,
                                      bool follow_links) {
  // Not following: O_NOFOLLOW refuses a link as the last component; O_NONBLOCK keeps a FIFO's
  // open from waiting for a writer, and fstat then refuses it.
  const int flags = O_RDONLY | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW | O_NONBLOCK);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    if (!follow_links && errno == ELOOP) {
      return Error{fmt::format("'{}' is a symbolic link; it is not followed", path)};
    }
    return Error{fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  }
  if (!follow_links) {
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      ::close(fd);
      return Error{fmt::format("'{}' is not a regular file", path)};
    }
  }
  std::string data;
  std::vector<char> chunk(size_t{1} << 16);
  while (true) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int error = errno;
      ::close(fd);
      return Error{fmt::format("cannot read '{}': {}", path, std::strerror(error))};
    }
    if (n == 0) {
      break;
    }
    data.append(chunk.data(), static_cast<size_t>(n));
    if (data.size() > max_bytes) {
      ::close(fd);
      return Error{
          fmt::format("'{}' is larger than {} MiB; gpucheck reads no more", path, max_bytes >> 20)};
    }
  }
  ::close(fd);
  return data;
}

Expected<nlohmann::json> parse_json_input(std::string_view text, size_t max_depth) {
  PathTrackingSax sax(max_depth);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text, &sax);
  } catch (const std::exception& e) {
    return Error{fmt::format("not valid JSON: {}", e.what())};
  }
  if (!ok) {
    return Error{sax.error().empty() ? std::string("not valid JSON") : sax.error()};
  }
  return std::move(sax.result());
}

} // namespace gpucheck
