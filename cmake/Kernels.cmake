# Embedded GPU kernels: filled in by the kernels work (issue 4).
set(GPUCHECK_KERNEL_OBJECTS "")
set(GPUCHECK_KERNEL_DEPENDS "")
