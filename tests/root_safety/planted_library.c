/* A library another user planted (the root-safety suite, tests/root_safety): loading it runs its
 * constructor, which leaves "<its own path>.ran" behind. gpucheck running as root must never load
 * it, so that marker must never appear. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void planted_library_ran(void) {
  Dl_info info;
  if (dladdr((void*)&planted_library_ran, &info) == 0 || info.dli_fname == NULL) {
    return;
  }
  char marker[4096];
  if (snprintf(marker, sizeof marker, "%s.ran", info.dli_fname) >= (int)sizeof marker) {
    return;
  }
  const int fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) {
    close(fd);
  }
}
