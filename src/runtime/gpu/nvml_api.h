// The subset of NVIDIA's nvml.h that perseus uses, declared here so the build
// needs neither the CUDA toolkit nor a GPU driver.
//
// The names, values and signatures match nvml.h, which is a stable C ABI:
// NvmlGpu resolves these functions with dlsym from libnvidia-ml.so.1, and the
// fake library in fake_nvml/ defines them. Do not include this header together
// with the real nvml.h.
#pragma once

extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;  // opaque handle owned by NVML

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

// Clock domains of nvmlDeviceGetClockInfo.
typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

// Buffer sizes nvml.h recommends for names and UUIDs.
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96

// Function types, one per symbol perseus resolves.
typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int* device_count);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char* name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char* uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetSupportedMemoryClocks_fn)(nvmlDevice_t device, unsigned int* count,
                                                               unsigned int* clocks_mhz);
typedef nvmlReturn_t (*nvmlDeviceGetSupportedGraphicsClocks_fn)(nvmlDevice_t device, unsigned int memory_clock_mhz,
                                                                 unsigned int* count, unsigned int* clocks_mhz);
typedef nvmlReturn_t (*nvmlDeviceSetGpuLockedClocks_fn)(nvmlDevice_t device, unsigned int min_clock_mhz,
                                                         unsigned int max_clock_mhz);
typedef nvmlReturn_t (*nvmlDeviceResetGpuLockedClocks_fn)(nvmlDevice_t device);
// Millijoules since the driver was last reloaded (Volta and newer).
typedef nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption_fn)(nvmlDevice_t device, unsigned long long* energy_mj);
// Milliwatts, board power.
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t device, unsigned int* power_mw);
// The clock the GPU runs at now, MHz. Optional: perseus works without it.
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock_mhz);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);

}  // extern "C"
