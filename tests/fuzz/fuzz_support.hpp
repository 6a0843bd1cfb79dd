#pragma once
/// Helpers shared by the fuzz targets (docs/fuzzing.md): the input split into sections, and a
/// path that reads back given bytes, for readers that take a file name.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/report.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::fuzz {

/// The separator between the sections of one input (a line of its own in the seed files).
inline constexpr std::string_view k_section_separator = "\n%%%%\n";

/// `data` cut at each separator into at most `count` sections (the last takes the rest); missing
/// sections are empty.
std::vector<std::string_view> sections(std::string_view data, size_t count);

/// The input as a string_view.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A file in memory (memfd) whose contents each call replaces; path() reads them back through
/// /proc/self/fd, so readers that take a path need no disk.
class MemoryFile {
public:
  MemoryFile();
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  /// Replace the contents; returns the path.
  const std::string& write(std::string_view bytes);
  [[nodiscard]] const std::string& path() const { return m_path; }

private:
  int m_fd = -1;
  std::string m_path;
};

/// A private directory that lives as long as the process (removed at exit).
const std::string& scratch_directory();

/// Write `bytes` to `path` (created or truncated). Aborts when that fails: the harness is broken.
void write_file(const std::string& path, std::string_view bytes);

/// What gpucheck does with a snapshot once it has one (`--from-snapshot`): every passive check
/// with the active compatibility matrix, the root causes, then every renderer (text, verbose
/// text, JSON, Markdown, JUnit) and the redaction. Aborts when the JSON report is not valid JSON.
void exercise_report(const SystemSnapshot& snapshot);

/// The report of a replayed snapshot: every passive check, the summary and the root causes.
Report report_of(const SystemSnapshot& snapshot);

/// What `gpucheck snapshot` and `--from-snapshot` do with it: written as JSON (which must be
/// valid) and read back (which must succeed). Aborts otherwise.
void check_snapshot_round_trip(const SystemSnapshot& snapshot);

/// A recorded snapshot of a healthy H200 (tests/snapshots/h200_healthy.json), read once.
const SystemSnapshot& recorded_snapshot();

} // namespace gpucheck::fuzz
