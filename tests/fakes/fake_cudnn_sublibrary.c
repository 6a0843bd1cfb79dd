/* Fake cuDNN sub-library (9: ops, cnn, adv, engines, heuristic; 8: ops_train, cnn_*, adv_*).
 * Built once per name with FAKE_CUDNN_SUBLIBRARY=<name> and, for those with one,
 * FAKE_CUDNN_CHECK=<its VersionCheck>. Linked against the core library (graph in 9, ops_infer in
 * 8; DT_NEEDED) like the real ones. Its version check returns cudnn.<name>_check_rc when set,
 * else a version mismatch (9: 1002 SUBLIBRARY_VERSION_MISMATCH, 8: 14 VERSION_MISMATCH) when
 * cudnn.<name>_version differs from the core library's version, else 0. */
#include <stdio.h>

#include "fake_scenario.h"

#define FAKE_STR2(x) #x
#define FAKE_STR(x) FAKE_STR2(x)

#ifndef FAKE_CUDNN_MAJOR
#define FAKE_CUDNN_MAJOR 9
#endif

long long fake_cudnn_graph_version(void);

FAKE_EXPORT int fake_cudnn_sublibrary_check(void);
int fake_cudnn_sublibrary_check(void) {
  const char* name = FAKE_STR(FAKE_CUDNN_SUBLIBRARY);
  char key[128];
  snprintf(key, sizeof key, "cudnn.%s_check_rc", name);
  const long long rc = fake_get_int(key, -1);
  if (rc >= 0) {
    return (int)rc;
  }
  snprintf(key, sizeof key, "cudnn.%s_version", name);
  const long long graph = fake_cudnn_graph_version();
  return fake_get_int(key, graph) == graph ? 0 : (FAKE_CUDNN_MAJOR >= 9 ? 1002 : 14);
}

#ifdef FAKE_CUDNN_CHECK
FAKE_EXPORT int FAKE_CUDNN_CHECK(void);
int FAKE_CUDNN_CHECK(void) {
  return fake_cudnn_sublibrary_check();
}
#endif
