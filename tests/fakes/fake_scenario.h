/* Scenario file reader shared by the fake NVIDIA libraries.
 *
 * The file named by $FAKE_GPU_SCENARIO holds `key=value` lines ('#' starts a comment). Per-GPU
 * keys are `gpu.N.key`; `gpu.all.key` sets a default for every GPU. See README.md for the keys. */
#ifndef GPUCHECK_FAKE_SCENARIO_H
#define GPUCHECK_FAKE_SCENARIO_H

#define FAKE_HIDDEN __attribute__((visibility("hidden")))
#define FAKE_EXPORT __attribute__((visibility("default")))

/* The value of `key`, or NULL when the scenario does not set it. */
FAKE_HIDDEN const char* fake_get(const char* key);
/* Integer value (decimal or 0x hex) of `key`, or `fallback`. */
FAKE_HIDDEN long long fake_get_int(const char* key, long long fallback);

/* `gpu.<index>.<key>`, else `gpu.all.<key>`, else NULL. */
FAKE_HIDDEN const char* fake_gpu_get(int index, const char* key);
FAKE_HIDDEN long long fake_gpu_int(int index, const char* key, long long fallback);

/* Number of GPUs: `gpu.count`, else one more than the highest N in any `gpu.N.` key, else 1. */
FAKE_HIDDEN int fake_gpu_count(void);

/* Per-GPU identity with defaults derived from the index. Buffers are owned by the reader. */
FAKE_HIDDEN const char* fake_gpu_name(int index);
FAKE_HIDDEN const char* fake_gpu_uuid(int index);
/* NVML form: "00000000:3B:00.0". */
FAKE_HIDDEN const char* fake_gpu_bus_id(int index);

/* Acts on a `<prefix>_crash` (abort) or `<prefix>_hang` (sleep forever) knob set to 1. */
FAKE_HIDDEN void fake_maybe_crash_or_hang(const char* prefix);

#endif
