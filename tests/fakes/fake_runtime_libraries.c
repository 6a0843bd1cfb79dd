/* Fake libcudart.so.13, libcublas.so.13 and libnccl.so.2: only the version queries gpucheck's
 * library probe makes. One source, built per library with FAKE_CUDART, FAKE_CUBLAS or FAKE_NCCL. */
#include <stdio.h>

#include "fake_scenario.h"

#if defined(FAKE_CUDART)
FAKE_EXPORT int cudaRuntimeGetVersion(int* version);
int cudaRuntimeGetVersion(int* version) {
  *version = (int)fake_get_int("cudart.version", 13000);
  return 0;
}
#elif defined(FAKE_CUBLAS)
/* libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2. */
FAKE_EXPORT int cublasGetProperty(int type, int* value);
int cublasGetProperty(int type, int* value) {
  const char* text = fake_get("cublas.version");
  int parts[3] = {13, 0, 2};
  if (text != NULL) {
    sscanf(text, "%d.%d.%d", &parts[0], &parts[1], &parts[2]);
  }
  if (type < 0 || type > 2) {
    return 7; /* CUBLAS_STATUS_INVALID_VALUE */
  }
  *value = parts[type];
  return 0;
}
#elif defined(FAKE_NCCL)
FAKE_EXPORT int ncclGetVersion(int* version);
int ncclGetVersion(int* version) {
  *version = (int)fake_get_int("nccl.version", 22803);
  return 0;
}
#endif
