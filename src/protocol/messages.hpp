#pragma once
/// The gate vocabulary of the GPU engine: single bytes on a GPU child's control channel
/// (process::ChildRequest::control_channel), the same enum on both sides. A protocol header: it
/// depends on nothing but std, so the child side (src/gpu) includes it too.
///
/// One child's life (docs/engine.md):
///   parent: setup ->            child: builds its context -> context_built
///           (prepares: kernels, pinned memory, small verified cases) -> ready
///   parent: go ->               child: its gated (timed) work [-> paused ... parent: resume]
///           -> done (checks results on the host, tears down, exits)

#include <optional>
#include <string_view>

namespace gpucheck::protocol {

enum class GateMessage : char {
  // parent -> child
  setup = 's',  ///< build the CUDA context now
  go = 'g',     ///< the gated work may start
  resume = 'q', ///< the host is quiet: continue the paused measurement
  stop = 'x',   ///< the user stopped the run: end the timed work now and report what was done
  // child -> parent
  context_built = 'c', ///< the context exists (the next child on the GPU may build its own)
  ready = 'r',         ///< prepared, waiting for go (waiting is not the child's own time)
  paused = 'p',        ///< waits for the host to be quiet (not its own time either)
  done = 'd',          ///< done with the gated work; checks results and tears down next
};

/// The message a byte stands for; nullopt for any other byte (garbage on the channel).
std::optional<GateMessage> parse_gate_message(char byte);
/// Its name for traces: "setup", "context_built", ...
std::string_view to_string(GateMessage message);
/// Whether the parent sends it (setup, go, resume) rather than the child.
bool sent_by_parent(GateMessage message);

/// The child's side of the protocol. Each call returns at once (doing nothing) in a child
/// started without a control channel (by hand, or by bench/compare.py), so a child runs alone
/// as well as scheduled.
namespace gate {
/// Block until the parent says `setup` (a parent that went away ends the child quietly), and
/// return the device memory the plan allows this child's buffers, in bytes (the parent sends it
/// right after `setup` as decimal MiB and a newline); nullopt when not scheduled.
std::optional<unsigned long long> await_setup();
/// Say `context_built`.
void context_built();
/// Say `ready`, then block until `go`.
void ready_and_wait();
/// Say `paused`, then block until `resume`.
void pause_for_quiet_host();
/// Say `done` and close the channel. Idempotent.
void done();
/// Say `done` for one work of a child that goes on to another work (the channel stays open).
void work_done();
/// Whether the parent said `stop` (or went away) since the last call; never blocks. A long work
/// asks between its steps.
bool stop_requested();
/// Whether this child is scheduled (has a channel) rather than run alone.
bool scheduled();
} // namespace gate

} // namespace gpucheck::protocol
