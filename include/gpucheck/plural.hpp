#pragma once
/// Counted nouns for messages and summaries: "1 copy", "2 copies", never "2 cop(ies)".

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace gpucheck {

/// `count` and the noun in the form it takes: `one` for exactly 1, else `many`.
template <typename Count>
std::string plural(Count count, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

/// The same with the regular English plural: `noun` + "s".
template <typename Count> std::string plural(Count count, std::string_view noun) {
  return count == 1 ? fmt::format("{} {}", count, noun) : fmt::format("{} {}s", count, noun);
}

} // namespace gpucheck
