/* The rest of the driver API that gpucheck resolves: present (so a probe sees a complete driver)
 * but answering CUDA_ERROR_NOT_SUPPORTED (801). No cuda.h here: the prototypes do not matter for a
 * function that ignores its arguments, and the names are the versioned ones cuda.h maps to. */
#include "fake_scenario.h"

#define FAKE_UNIMPLEMENTED(name)                                                                   \
  FAKE_EXPORT int name(void);                                                                      \
  int name(void) {                                                                                 \
    return 801;                                                                                    \
  }

FAKE_UNIMPLEMENTED(cuCtxSynchronize)
FAKE_UNIMPLEMENTED(cuCtxGetStreamPriorityRange)
FAKE_UNIMPLEMENTED(cuMemAlloc_v2)
FAKE_UNIMPLEMENTED(cuMemFree_v2)
FAKE_UNIMPLEMENTED(cuMemHostAlloc)
FAKE_UNIMPLEMENTED(cuMemFreeHost)
FAKE_UNIMPLEMENTED(cuMemHostGetDevicePointer_v2)
FAKE_UNIMPLEMENTED(cuMemHostRegister_v2)
FAKE_UNIMPLEMENTED(cuMemHostUnregister)
FAKE_UNIMPLEMENTED(cuMemcpyHtoD_v2)
FAKE_UNIMPLEMENTED(cuMemcpyDtoH_v2)
FAKE_UNIMPLEMENTED(cuMemcpyHtoDAsync_v2)
FAKE_UNIMPLEMENTED(cuMemcpyDtoHAsync_v2)
FAKE_UNIMPLEMENTED(cuMemcpyDtoDAsync_v2)
FAKE_UNIMPLEMENTED(cuMemsetD32Async)
FAKE_UNIMPLEMENTED(cuMemsetD8_v2)
FAKE_UNIMPLEMENTED(cuStreamCreate)
FAKE_UNIMPLEMENTED(cuStreamCreateWithPriority)
FAKE_UNIMPLEMENTED(cuStreamGetPriority)
FAKE_UNIMPLEMENTED(cuStreamDestroy_v2)
FAKE_UNIMPLEMENTED(cuStreamSynchronize)
FAKE_UNIMPLEMENTED(cuStreamWaitEvent)
FAKE_UNIMPLEMENTED(cuStreamBeginCapture_v2)
FAKE_UNIMPLEMENTED(cuStreamEndCapture)
FAKE_UNIMPLEMENTED(cuEventCreate)
FAKE_UNIMPLEMENTED(cuEventDestroy_v2)
FAKE_UNIMPLEMENTED(cuEventRecord)
FAKE_UNIMPLEMENTED(cuEventSynchronize)
FAKE_UNIMPLEMENTED(cuEventElapsedTime_v2)
FAKE_UNIMPLEMENTED(cuLaunchKernel)
FAKE_UNIMPLEMENTED(cuGraphInstantiateWithFlags)
FAKE_UNIMPLEMENTED(cuGraphLaunch)
FAKE_UNIMPLEMENTED(cuGraphExecDestroy)
FAKE_UNIMPLEMENTED(cuGraphDestroy)
FAKE_UNIMPLEMENTED(cuCtxEnablePeerAccess)
FAKE_UNIMPLEMENTED(cuStreamWaitValue32_v2)
