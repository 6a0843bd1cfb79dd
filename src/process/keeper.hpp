#pragma once
/// The keeper: a small process forked when gpucheck starts that outlives it by a moment. Every
/// child gpucheck starts leads a process group of its own, which it hands to the keeper here;
/// when gpucheck ends, however it ends (SIGKILL included), the keeper's pipe reaches its end
/// and the keeper kills every group still handed to it, so an interpreter's or a helper's own
/// children never outlive gpucheck (PR_SET_PDEATHSIG reaches only the direct children).

#include <sys/types.h>

namespace gpucheck::process {

/// Fork the keeper. Call once, early in main, while gpucheck has one thread; later calls, and
/// a fork that fails, leave groups unwatched (the children still die with gpucheck).
void start_keeper();

/// The keeper kills process group `group` when gpucheck ends, unless forgotten first.
void keeper_watch(pid_t group);

/// The group is gone (its leader was reaped after its group was killed): its number may be
/// reused, so the keeper must not kill it.
void keeper_forget(pid_t group);

/// Reap `leader` (a group leader gpucheck started) without waiting: once it has exited, and
/// before its zombie frees its number, what is left of its group is killed (nothing it started
/// outlives it) and the keeper forgets the group. The leader's pid when reaped (its wait status
/// in `status`), 0 while it runs, -1 on an error (errno).
pid_t reap_leader(pid_t leader, int* status);

} // namespace gpucheck::process
