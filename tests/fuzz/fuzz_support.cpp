#include "fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/root_causes.hpp"
#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/report.hpp"
#include "gpucheck/registry.hpp"
#include "gpucheck/runner.hpp"
#include "render/json.hpp"
#include "render/junit.hpp"
#include "render/markdown.hpp"
#include "render/redact.hpp"
#include "render/text.hpp"

namespace gpucheck::fuzz {

std::vector<std::string_view> sections(std::string_view data, size_t count) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < count) {
    const size_t at = data.find(k_section_separator);
    if (at == std::string_view::npos) {
      break;
    }
    out.push_back(data.substr(0, at));
    data.remove_prefix(at + k_section_separator.size());
  }
  out.push_back(data);
  out.resize(count);
  return out;
}

MemoryFile::MemoryFile() : m_fd(::memfd_create("gpucheck-fuzz", 0)) {
  if (m_fd < 0) {
    std::perror("memfd_create");
    std::abort();
  }
  m_path = "/proc/self/fd/" + std::to_string(m_fd);
}

MemoryFile::~MemoryFile() {
  ::close(m_fd);
}

const std::string& MemoryFile::write(std::string_view bytes) {
  if (::ftruncate(m_fd, 0) != 0) {
    std::abort();
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(m_fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) {
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  return m_path;
}

namespace {

/// Where the fixture files go: $TMPDIR when set, else /dev/shm when it can be written, else the
/// system's temporary directory. The probe targets rewrite their files at every execution, and on
/// a disk file system (ext4 flushes a file truncated and written again when it is closed) that
/// costs about 40 ms an execution against 4 on tmpfs.
std::filesystem::path scratch_parent() {
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir != '\0') {
    return tmpdir;
  }
  if (::access("/dev/shm", W_OK | X_OK) == 0) {
    return "/dev/shm";
  }
  return std::filesystem::temp_directory_path();
}

struct Scratch {
  std::string path;
  Scratch() {
    std::string pattern = (scratch_parent() / "gpucheck-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

} // namespace

const std::string& scratch_directory() {
  static const Scratch scratch;
  return scratch.path;
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz harness: cannot write %s\n", path.c_str());
    std::abort();
  }
}

Report report_of(const SystemSnapshot& snapshot) {
  CheckOptions options;
  options.quick = true;
  options.no_gpu_work_reason = "replaying a snapshot";
  const CheckContext context{snapshot, options, nullptr};
  Report report;
  report.results = run_checks(all_checks(), context, Selection{});
  report.summary = summarize(report.results);
  report.root_causes = find_root_causes(report.results);
  report.context.mode = "replay";
  report.snapshot = snapshot;
  return report;
}

void exercise_report(const SystemSnapshot& snapshot) {
  const Report report = report_of(snapshot);
  render::TextStyle style;
  (void)render::render_text(report, style);
  style.verbose = true;
  style.color = true;
  (void)render::render_text(report, style);
  const std::string json = render::render_json(report);
  if (!nlohmann::json::accept(json)) {
    std::fprintf(stderr, "fuzz: the JSON report is not valid JSON\n");
    std::abort();
  }
  (void)render::render_junit(report);
  render::Redactor redactor;
  (void)render::render_markdown(redactor.redact(report));
}

void check_snapshot_round_trip(const SystemSnapshot& snapshot) {
  const std::string text = render::render_snapshot_json(snapshot);
  Expected<SystemSnapshot> reread = snapshot_from_text(text);
  if (!reread) {
    std::fprintf(stderr, "fuzz: a snapshot written by gpucheck does not read back: %s\n",
                 reread.error().message.c_str());
    std::abort();
  }
}

const SystemSnapshot& recorded_snapshot() {
  static const SystemSnapshot snapshot = [] {
    std::ifstream in(GPUCHECK_FUZZ_SNAPSHOT, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    Expected<SystemSnapshot> parsed = snapshot_from_text(text);
    if (!parsed) {
      std::fprintf(stderr, "fuzz harness: cannot read %s\n", GPUCHECK_FUZZ_SNAPSHOT);
      std::abort();
    }
    return std::move(parsed).value();
  }();
  return snapshot;
}

} // namespace gpucheck::fuzz
