#include "gpucheck/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpucheck {

namespace {
char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return prefix.size() <= text.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(),
                    [](char a, char b) { return lower(a) == lower(b); });
}
} // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the optimal string alignment table.
  std::vector<size_t> before(b.size() + 1);
  std::vector<size_t> previous(b.size() + 1);
  std::vector<size_t> current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    previous[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  if (word.empty()) {
    return std::nullopt;
  }
  const size_t allowed = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : word.size() / 4;
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    size_t distance = edit_distance(word, candidate);
    if (distance == 0) {
      return std::nullopt;
    }
    // A word cut short ("--quic") or run on ("gpu.eccs") is near whatever its length.
    if (word.size() >= 3 && (starts_with_ignoring_case(candidate, word) ||
                             starts_with_ignoring_case(word, candidate))) {
      distance = std::min(distance, allowed);
    }
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean_words(std::string_view word, const std::vector<std::string>& candidates) {
  const std::optional<std::string> near = did_you_mean(word, candidates);
  return near ? fmt::format(" (did you mean '{}'?)", *near) : std::string();
}

} // namespace gpucheck
