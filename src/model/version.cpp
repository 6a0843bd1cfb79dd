#include "gpucheck/model/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace gpucheck {

std::optional<Version> Version::parse(std::string_view text) {
  std::vector<int> parts;
  size_t pos = 0;
  while (true) {
    const size_t dot = text.find('.', pos);
    const std::string_view part = text.substr(pos, dot == std::string_view::npos ? dot : dot - pos);
    if (part.empty() || part.size() > 6) {
      return std::nullopt;
    }
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || end != part.data() + part.size()) {
      return std::nullopt;
    }
    parts.push_back(value);
    if (dot == std::string_view::npos) {
      break;
    }
    pos = dot + 1;
  }
  if (parts.size() > 4) {
    return std::nullopt;
  }
  return Version(std::move(parts));
}

Version Version::leading(std::string_view text) {
  std::vector<int> parts;
  std::size_t pos = 0;
  while (pos < text.size()) {
    int value = 0;
    const char* begin = text.data() + pos;
    const auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (ec != std::errc{} || ptr == begin) {
      break;
    }
    parts.push_back(value);
    pos += static_cast<std::size_t>(ptr - begin);
    if (pos >= text.size() || text[pos] != '.') {
      break;
    }
    ++pos;
  }
  return Version(std::move(parts));
}

Version Version::truncated(size_t count) const {
  std::vector<int> parts = m_parts;
  if (parts.size() > count) {
    parts.resize(count);
  }
  return Version(std::move(parts));
}

std::string Version::str() const {
  std::string out;
  for (size_t i = 0; i < m_parts.size(); ++i) {
    if (i == 0) {
      out += std::to_string(m_parts[i]);
    } else if (i == 2 && m_parts.size() == 3 && m_parts[0] >= 100) {
      // Driver versions print the third component with two digits: 580.65.06.
      out += fmt::format(".{:02}", m_parts[i]);
    } else {
      out += fmt::format(".{}", m_parts[i]);
    }
  }
  return out;
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  const size_t n = std::min(m_parts.size(), other.m_parts.size());
  for (size_t i = 0; i < n; ++i) {
    if (m_parts[i] != other.m_parts[i]) {
      return m_parts[i] <=> other.m_parts[i];
    }
  }
  return m_parts.size() <=> other.m_parts.size();
}

std::strong_ordering compare_padded(const Version& a, const Version& b) {
  const std::size_t n = std::max(a.parts().size(), b.parts().size());
  for (std::size_t i = 0; i < n; ++i) {
    const int x = i < a.parts().size() ? a.parts()[i] : 0;
    const int y = i < b.parts().size() ? b.parts()[i] : 0;
    if (x != y) {
      return x <=> y;
    }
  }
  return std::strong_ordering::equal;
}

bool in_range(const Version& v, const Version& from, const Version& to) {
  return v.truncated(from.parts().size()) >= from && v.truncated(to.parts().size()) <= to;
}

Version cuda_from_int(int64_t encoded) {
  return Version({static_cast<int>(encoded / 1000), static_cast<int>((encoded % 1000) / 10)});
}

std::optional<Version> parse_cc(std::string_view text) {
  for (std::string_view prefix : {"sm_", "compute_", "SM_", "sm"}) {
    if (text.substr(0, prefix.size()) == prefix) {
      text.remove_prefix(prefix.size());
      break;
    }
  }
  // Arch-specific and family suffixes ("90a", "100f") name the same compute capability.
  while (!text.empty() && (text.back() == 'a' || text.back() == 'f')) {
    text.remove_suffix(1);
  }
  if (text.find('.') != std::string_view::npos) {
    std::optional<Version> v = Version::parse(text);
    if (!v || v->parts().size() != 2) {
      return std::nullopt;
    }
    return v;
  }
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.size() < 2 || text.size() > 3 || ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return Version({value / 10, value % 10});
}

std::string sm_name(const Version& cc) {
  return fmt::format("sm_{}{}", cc.major_number(), cc.minor_number());
}

} // namespace gpucheck
