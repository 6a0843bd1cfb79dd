// read_kernel_log: NVIDIA and PCIe events from the kernel log (F22, F24, F39): /dev/kmsg, read
// without blocking from the oldest record the ring buffer holds, or the journal of this boot.
#include "probes/kernel_log.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>

#include "gpucheck/model/snapshot_limits.hpp"
#include "probes/paths.hpp"
#include "probes/run_capture.hpp"

namespace gpucheck::probes {

namespace {

constexpr size_t k_max_text = 300;

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

/// A PCI address at `text`: "0000:3b:00.0" or "0000:3b:00" (an Xid's, without function: .0),
/// normalised to lower case with a 4-digit domain; "" when none.
std::string pci_address_at(std::string_view text) {
  size_t i = 0;
  auto hex_run = [&](size_t min, size_t max) {
    size_t n = 0;
    while (i + n < text.size() && n < max && is_hex(text[i + n])) {
      ++n;
    }
    if (n < min) {
      return std::string_view();
    }
    const std::string_view run = text.substr(i, n);
    i += n;
    return run;
  };
  const std::string_view domain = hex_run(4, 8);
  if (domain.empty() || i >= text.size() || text[i] != ':') {
    return "";
  }
  ++i;
  const std::string_view bus = hex_run(2, 2);
  if (bus.empty() || i >= text.size() || text[i] != ':') {
    return "";
  }
  ++i;
  const std::string_view device = hex_run(2, 2);
  if (device.empty()) {
    return "";
  }
  std::string function = "0";
  if (i + 1 < text.size() && text[i] == '.' && is_hex(text[i + 1])) {
    function = std::string(1, text[i + 1]);
  }
  const unsigned long domain_value = std::strtoul(std::string(domain).c_str(), nullptr, 16);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04lx:%.2s:%.2s.%s", domain_value & 0xffffffffUL,
                std::string(bus).c_str(), std::string(device).c_str(), function.c_str());
  std::string out = buffer;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// The first PCI address anywhere in `text` after `from`.
std::string first_pci_address(std::string_view text, size_t from = 0) {
  for (size_t i = from; i + 7 <= text.size(); ++i) {
    if ((i == 0 || !is_hex(text[i - 1])) && is_hex(text[i])) {
      if (std::string address = pci_address_at(text.substr(i)); !address.empty()) {
        return address;
      }
    }
  }
  return "";
}

std::optional<int> number_at(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') {
    ++i;
  }
  int value = 0;
  size_t digits = 0;
  while (i < text.size() && digits < 6 && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    value = value * 10 + (text[i] - '0');
    ++i;
    ++digits;
  }
  return digits == 0 ? std::nullopt : std::optional<int>(value);
}

bool contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

/// "Xid (PCI:0000:3b:00): 79, ..." or "SXid (PCI:0000:05:00.0): 12028, Non-fatal, ..." at `at`.
std::optional<KernelLogEvent> parse_xid(std::string_view message, size_t at, bool switch_xid) {
  const size_t open = message.find('(', at);
  const size_t close = message.find("):", at);
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  std::string_view inside = message.substr(open + 1, close - open - 1);
  if (inside.starts_with("PCI:")) {
    inside.remove_prefix(4);
  }
  const std::optional<int> code = number_at(message.substr(close + 2));
  if (!code) {
    return std::nullopt;
  }
  KernelLogEvent event;
  event.kind = switch_xid ? "sxid" : "xid";
  event.code = code;
  event.pci_bus_id = pci_address_at(inside);
  if (switch_xid) {
    const std::string_view rest = message.substr(close + 2);
    event.severity = contains(rest, "Non-fatal") || contains(rest, "Nonfatal") ? "non-fatal"
                     : contains(rest, "Fatal")                                 ? "fatal"
                                                                               : "";
  }
  return event;
}

} // namespace

std::optional<KernelLogEvent> parse_kernel_message(std::string_view message, double seconds) {
  std::optional<KernelLogEvent> event;
  if (const size_t sxid = message.find("SXid ("); sxid != std::string_view::npos) {
    event = parse_xid(message, sxid, true);
  } else if (const size_t xid = message.find("NVRM: Xid ("); xid != std::string_view::npos) {
    event = parse_xid(message, xid, false);
  } else if (contains(message, "NVRM") && contains(message, "fallen off the bus")) {
    // "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:1db4) installed in this system has fallen
    // off the bus and is not responding to commands."
    event = KernelLogEvent{};
    event->kind = "fallen_off_bus";
    event->pci_bus_id = first_pci_address(message);
  } else if (const size_t aer = message.find("AER:"); aer != std::string_view::npos) {
    // The root port names the device after "received:" ("pcieport 0000:00:01.0: AER: Uncorrected
    // (Non-Fatal) error received: 0000:3b:00.0") or, since the kernel's 2025 AER logging rework,
    // after "received from" ("AER: Multiple Uncorrectable (Non-Fatal) error message received
    // from 0000:3b:00.0"); the device's own line names it before "AER:" ("nvidia 0000:3b:00.0:
    // AER: PCIe Bus Error: severity=..."). Detail lines (aer_status, [ 0] RxErr) are left out.
    size_t received = message.find("error received:", aer);
    if (received == std::string_view::npos) {
      received = message.find("error message received from", aer);
    }
    const bool bus_error = contains(message.substr(aer), "PCIe Bus Error");
    if (received == std::string_view::npos && !bus_error) {
      return std::nullopt;
    }
    event = KernelLogEvent{};
    event->kind = "aer";
    event->pci_bus_id = received != std::string_view::npos
                            ? first_pci_address(message, received)
                            : first_pci_address(message.substr(0, aer));
    const std::string_view rest = message.substr(aer);
    // Before the rework "Uncorrected" and "Corrected", after it the specification's
    // "Uncorrectable" and "Correctable".
    event->severity = contains(rest, "Non-Fatal")   ? "uncorrected"
                      : contains(rest, "Fatal")     ? "fatal"
                      : contains(rest, "Uncorrect") ? "uncorrected"
                      : contains(rest, "Correct")   ? "corrected"
                                                    : "uncorrected";
  }
  if (!event) {
    return std::nullopt;
  }
  event->seconds = seconds;
  event->text = std::string(message.substr(0, k_max_text));
  return event;
}

KernelLogParser::KernelLogParser(std::vector<std::string> nvidia_devices)
    : m_devices(std::move(nvidia_devices)) {}

void KernelLogParser::add_message(std::string_view message, double seconds) {
  std::optional<KernelLogEvent> event = parse_kernel_message(message, seconds);
  if (!event) {
    return;
  }
  if (event->kind == "aer" &&
      std::find(m_devices.begin(), m_devices.end(), event->pci_bus_id) == m_devices.end()) {
    return; // another device's PCIe errors
  }
  m_events.push_back(std::move(*event));
  if (m_events.size() > k_kernel_log_max_events) {
    m_events.erase(m_events.begin()); // keep the newest
  }
}

void KernelLogParser::add_kmsg_record(std::string_view record) {
  ++m_records;
  const size_t semicolon = record.find(';');
  if (semicolon == std::string_view::npos) {
    return;
  }
  // PRI,SEQ,USEC,FLAGS: the third field is microseconds since boot.
  const std::string_view prefix = record.substr(0, semicolon);
  const size_t first = prefix.find(',');
  const size_t second = first == std::string_view::npos ? first : prefix.find(',', first + 1);
  double seconds = 0.0;
  if (second != std::string_view::npos) {
    seconds = std::strtod(std::string(prefix.substr(second + 1)).c_str(), nullptr) / 1e6;
  }
  seconds = snapshot_float(seconds).value_or(0.0); // a hostile record: time unknown
  std::string_view message = record.substr(semicolon + 1);
  message = message.substr(0, message.find('\n')); // continuation lines hold KEY=value only
  add_message(message, seconds);
}

void KernelLogParser::add_journal_line(std::string_view line) {
  ++m_records;
  const size_t open = line.find('[');
  const size_t close = line.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return;
  }
  const double seconds =
      snapshot_float(
          std::strtod(std::string(line.substr(open + 1, close - open - 1)).c_str(), nullptr))
          .value_or(0.0);
  const size_t kernel = line.find("kernel: ", close);
  add_message(kernel == std::string_view::npos ? line.substr(close + 1) : line.substr(kernel + 8),
              seconds);
}

KernelLogInfo KernelLogParser::take(KernelLogInfo info) {
  info.events = std::move(m_events);
  info.records_read = m_records;
  return info;
}

namespace {

std::string dmesg_restrict_note(const Sysroot& root) {
  const std::optional<std::string> restrict = root.read_line("/proc/sys/kernel/dmesg_restrict");
  return restrict ? " (kernel.dmesg_restrict = " + * restrict + ")" : std::string();
}

/// Whether this user may read the system journal's files (else journalctl shows no kernel
/// lines without saying so on stdout).
bool may_read_system_journal(const Sysroot& root) {
  for (const char* base : {"/var/log/journal", "/run/log/journal"}) {
    for (const std::string& machine : root.list(base)) {
      const std::string file = join_path(join_path(base, machine), "system.journal");
      if (stat_path(root, file).is_regular && can_access(root, file, R_OK)) {
        return true;
      }
    }
  }
  return false;
}

/// The journal of this boot, kernel lines that can hold events only, for the real root.
std::optional<KernelLogInfo> read_journal(const Sysroot& root, KernelLogParser& parser,
                                          KernelLogInfo info) {
  if (root.root() != "/" || !may_read_system_journal(root)) {
    return std::nullopt;
  }
  for (const char* journalctl : {"/usr/bin/journalctl", "/bin/journalctl"}) {
    if (!stat_path(root, journalctl).is_regular) {
      continue;
    }
    const std::optional<std::string> text =
        run_capture({journalctl, "-k", "-b", "0", "-o", "short-monotonic", "--no-pager", "-q",
                     "--grep", "NVRM|SXid|AER:|fallen off the bus"},
                    std::chrono::milliseconds(3000), k_kernel_log_max_bytes);
    if (!text) {
      return std::nullopt;
    }
    size_t start = 0;
    while (start < text->size()) {
      const size_t end = std::min(text->find('\n', start), text->size());
      parser.add_journal_line(std::string_view(*text).substr(start, end - start));
      start = end + 1;
    }
    info.source = "journal";
    info.readable = true;
    info.unreadable_reason.clear();
    return parser.take(std::move(info));
  }
  return std::nullopt;
}

} // namespace

KernelLogInfo read_kernel_log(const Sysroot& root, const std::vector<std::string>& nvidia_devices) {
  KernelLogInfo info;
  if (const std::optional<std::string> uptime = root.read_line("/proc/uptime")) {
    char* end = nullptr;
    const double seconds = std::strtod(uptime->c_str(), &end);
    if (end != uptime->c_str()) {
      info.uptime_s = snapshot_float(seconds); // unknown when absurd (not a snapshot's number)
    }
  }
  KernelLogParser parser(nvidia_devices);
  // In a tree, a link named /dev/kmsg resolves inside it (never the host's log).
  const std::optional<std::string> path = root.host_resolved("/dev/kmsg");
  const int fd = path ? ::open(path->c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
  if (fd < 0) {
    const int error = path ? errno : ENOENT;
    info.unreadable_reason =
        "/dev/kmsg: " + std::string(std::strerror(error)) +
        (error == EPERM || error == EACCES ? dmesg_restrict_note(root) : std::string());
    if (std::optional<KernelLogInfo> journal = read_journal(root, parser, info)) {
      return std::move(*journal);
    }
    return info;
  }
  info.source = "kmsg";
  info.readable = true;
  struct stat st {};
  const bool device = ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
  size_t total = 0;
  std::array<char, 8192> buffer{};
  std::string pending; // a fixture file: records are lines, continuation lines start with ' '
  for (;;) {
    if (total >= k_kernel_log_max_bytes) {
      info.truncated = true;
      break;
    }
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR || errno == EPIPE) {
        continue; // EPIPE: the record was overwritten while we read; the next one follows
      }
      if (errno != EAGAIN && total == 0) {
        info.readable = false;
        info.unreadable_reason = "/dev/kmsg: " + std::string(std::strerror(errno));
      }
      break; // EAGAIN: the end of the buffer
    }
    if (n == 0) {
      break;
    }
    total += static_cast<size_t>(n);
    if (device) {
      parser.add_kmsg_record(std::string_view(buffer.data(), static_cast<size_t>(n)));
      continue;
    }
    pending.append(buffer.data(), static_cast<size_t>(n));
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      if (end > start && pending[start] != ' ') {
        parser.add_kmsg_record(std::string_view(pending).substr(start, end - start));
      }
    }
    pending.erase(0, start);
  }
  if (!device && !pending.empty() && pending.front() != ' ') {
    parser.add_kmsg_record(pending);
  }
  ::close(fd);
  return parser.take(std::move(info));
}

} // namespace gpucheck::probes
