#pragma once
/// The two text helpers every folder needs, once.

#include <string>
#include <string_view>

namespace gpucheck {

/// ASCII lower case ("H200 NVL" -> "h200 nvl"); every other byte unchanged (no locale).
std::string lower(std::string_view text);

/// `text` without the ASCII whitespace (space, \t, \n, \v, \f, \r) at either end; a view into
/// `text`, so keep what it views alive.
std::string_view trim(std::string_view text);

} // namespace gpucheck
