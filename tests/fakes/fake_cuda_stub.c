/* Like the toolkit's stubs/libcuda.so: links, loads, and answers every call with
 * CUDA_ERROR_STUB_LIBRARY (34). Even cuGetErrorName/cuGetErrorString cannot name the code. */
#include "fake_scenario.h"

#define FAKE_STUB(name)                                                                            \
  FAKE_EXPORT int name(void);                                                                      \
  int name(void) {                                                                                 \
    return 34;                                                                                     \
  }

FAKE_STUB(cuInit)
FAKE_STUB(cuDriverGetVersion)
FAKE_STUB(cuGetErrorName)
FAKE_STUB(cuGetErrorString)
FAKE_STUB(cuDeviceGetCount)
FAKE_STUB(cuDeviceGet)
FAKE_STUB(cuDeviceGetName)
FAKE_STUB(cuDeviceGetAttribute)
FAKE_STUB(cuDeviceTotalMem_v2)
FAKE_STUB(cuDeviceGetUuid_v2)
FAKE_STUB(cuDeviceGetPCIBusId)
