#pragma once
/// Any bytes in, a valid report out (docs/security.md, "Any bytes in"): text from the machine
/// (environment values, paths, sysfs files, a GPU name in a snapshot) may hold bytes that are not
/// UTF-8. JSON and XML must be valid UTF-8, so such bytes are written as the visible text
/// "\xNN" (backslash, x, two hex digits) instead of being dropped or failing the report.

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace gpucheck::render {

/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above
/// U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// `text` with every byte that is not part of a well-formed UTF-8 sequence written as "\xNN";
/// valid text is returned unchanged.
std::string visible_utf8(std::string_view text);

/// Apply visible_utf8 to every string and object key in `value`, in place. Keys that become
/// equal keep the first value.
void make_valid_utf8(nlohmann::json& value);

} // namespace gpucheck::render
