#pragma once
/// Reading JSON that comes from outside (a --config, --from-snapshot, --matrix file, merge
/// inputs) with limits (docs/security.md, "Input limits"): the file is read up to a size cap
/// (a FIFO or /dev/zero cannot make it grow without end), nesting is capped (200k nested arrays
/// must not overflow the stack anywhere later), and every problem, a number that overflows a
/// double (`1e400`) included, comes back as an Error naming the JSON path and the byte offset,
/// never as an exception.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "gpucheck/expected.hpp"

namespace gpucheck {

/// The largest input file read (reports with raw sources stay far below it).
inline constexpr size_t k_max_input_bytes = size_t{64} << 20;
/// The deepest nesting of arrays and objects accepted (gpucheck's own files nest under 10).
inline constexpr size_t k_max_json_depth = 128;

/// Read `path` (a regular file, a FIFO or a device: anything that can be read) up to
/// `max_bytes`; an error names the path and says why ("larger than 64 MiB", "No such file").
/// With `follow_links` false (other parties' files: `merge`), only a regular file that is not a
/// symbolic link is read ("is a symbolic link", "is not a regular file").
Expected<std::string> read_input_file(const std::string& path, size_t max_bytes = k_max_input_bytes,
                                      bool follow_links = true);

/// Parse `text` as JSON with the depth cap. An error reads "at $.gates.min (byte 42): number
/// overflow: '1e400'" or "at $ (byte 0): syntax error ..."; never throws.
Expected<nlohmann::json> parse_json_input(std::string_view text,
                                          size_t max_depth = k_max_json_depth);

} // namespace gpucheck
