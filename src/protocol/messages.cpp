#include "protocol/messages.hpp"

#include <array>
#include <string>

#include "process/child_process.hpp"

namespace gpucheck::protocol {

namespace {
struct Spelling {
  GateMessage message;
  std::string_view name;
  bool from_parent;
};
constexpr std::array<Spelling, 8> k_messages{{{GateMessage::setup, "setup", true},
                                              {GateMessage::go, "go", true},
                                              {GateMessage::resume, "resume", true},
                                              {GateMessage::stop, "stop", true},
                                              {GateMessage::context_built, "context_built", false},
                                              {GateMessage::ready, "ready", false},
                                              {GateMessage::paused, "paused", false},
                                              {GateMessage::done, "done", false}}};

char byte_of(GateMessage message) {
  return static_cast<char>(message);
}
} // namespace

std::optional<GateMessage> parse_gate_message(char byte) {
  for (const Spelling& s : k_messages) {
    if (byte_of(s.message) == byte) {
      return s.message;
    }
  }
  return std::nullopt;
}

std::string_view to_string(GateMessage message) {
  for (const Spelling& s : k_messages) {
    if (s.message == message) {
      return s.name;
    }
  }
  return "unknown";
}

bool sent_by_parent(GateMessage message) {
  for (const Spelling& s : k_messages) {
    if (s.message == message) {
      return s.from_parent;
    }
  }
  return false;
}

namespace gate {
std::optional<unsigned long long> await_setup() {
  if (!process::control_await(byte_of(GateMessage::setup))) {
    return std::nullopt;
  }
  const std::string mib = process::control_read_line();
  unsigned long long value = 0;
  for (const char c : mib) {
    if (c < '0' || c > '9' || value > (1ULL << 40)) {
      return std::nullopt;
    }
    value = value * 10 + static_cast<unsigned long long>(c - '0');
  }
  return mib.empty() ? std::nullopt : std::optional(value << 20);
}
void context_built() {
  process::control_send(byte_of(GateMessage::context_built));
}
void ready_and_wait() {
  if (process::control_send(byte_of(GateMessage::ready))) {
    process::control_await(byte_of(GateMessage::go));
  }
}
void pause_for_quiet_host() {
  if (process::control_send(byte_of(GateMessage::paused))) {
    process::control_await(byte_of(GateMessage::resume));
  }
}
void done() {
  if (process::control_send(byte_of(GateMessage::done))) {
    process::control_close();
  }
}
void work_done() {
  process::control_send(byte_of(GateMessage::done));
}
bool stop_requested() {
  return process::control_poll(byte_of(GateMessage::stop));
}
bool scheduled() {
  return process::control_channel_open();
}
} // namespace gate

} // namespace gpucheck::protocol
