#pragma once
/// The kernel log since boot: NVRM Xid and SXid events, "fallen off the bus" and PCIe AER
/// errors. Read from /dev/kmsg (non-blocking; a fixture's regular file under the sysroot), or,
/// on the real root only, from the journal when this user may read its system files. The log
/// is outside input: reading stops at a size cap, lines are cut, events are capped.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/snapshot.hpp"
#include "probes/sysroot.hpp"

namespace gpucheck::probes {

/// Bytes of log read at most, and events kept at most (the newest).
inline constexpr size_t k_kernel_log_max_bytes = 16U << 20U;
inline constexpr size_t k_kernel_log_max_events = 500;

/// The event in one kernel message ("NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen
/// off the bus."), or nullopt for any other message. `seconds` is its time since boot.
std::optional<KernelLogEvent> parse_kernel_message(std::string_view message, double seconds);

/// Accumulates events from log text, honouring the caps. AER events are kept only for
/// `nvidia_devices` (PCI addresses "0000:3b:00.0"); every NVIDIA event is kept.
class KernelLogParser {
public:
  explicit KernelLogParser(std::vector<std::string> nvidia_devices);

  /// One /dev/kmsg record: "PRI,SEQ,USEC,FLAGS;message" (continuation lines " KEY=value").
  void add_kmsg_record(std::string_view record);
  /// One `journalctl -o short-monotonic` line: "[    5.123456] host kernel: message".
  void add_journal_line(std::string_view line);

  /// The events so far, oldest first, and how many records were read.
  KernelLogInfo take(KernelLogInfo info);

private:
  void add_message(std::string_view message, double seconds);

  std::vector<std::string> m_devices;
  std::vector<KernelLogEvent> m_events;
  int64_t m_records = 0;
};

/// Read the kernel log under `root` (see the file comment). `nvidia_devices`: the NVIDIA PCI
/// functions, for AER attribution. Never throws; an unreadable log says why.
KernelLogInfo read_kernel_log(const Sysroot& root, const std::vector<std::string>& nvidia_devices);

} // namespace gpucheck::probes
