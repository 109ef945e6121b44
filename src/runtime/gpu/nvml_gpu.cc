// NvmlGpu: dlopen of libnvidia-ml, NVML calls and their error texts.
#include "runtime/gpu/nvml_gpu.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "runtime/gpu/nvml_api.h"

namespace perseus::runtime {
namespace {

const char* NvmlReturnName(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "NVML_SUCCESS";
    case NVML_ERROR_UNINITIALIZED: return "NVML_ERROR_UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED: return "NVML_ERROR_ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND: return "NVML_ERROR_NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER: return "NVML_ERROR_INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT: return "NVML_ERROR_TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE: return "NVML_ERROR_IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM: return "NVML_ERROR_CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM: return "NVML_ERROR_OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
    case NVML_ERROR_MEMORY: return "NVML_ERROR_MEMORY";
    case NVML_ERROR_NO_DATA: return "NVML_ERROR_NO_DATA";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case NVML_ERROR_GPU_NOT_FOUND: return "NVML_ERROR_GPU_NOT_FOUND";
    case NVML_ERROR_UNKNOWN: return "NVML_ERROR_UNKNOWN";
    default: return "NVML error";
  }
}

// A loaded libnvidia-ml with NVML initialised; shared by the GPUs opened from
// it so NVML stays initialised while any of them lives.
class NvmlLibrary {
 public:
  static Result<std::shared_ptr<NvmlLibrary>> Load(const std::string& requested_path);
  ~NvmlLibrary() {
    if (initialised_) shutdown_();
    if (handle_ != nullptr) dlclose(handle_);
  }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // "<function>: Insufficient Permissions (NVML_ERROR_NO_PERMISSION)<hint>",
  // with the code kUnavailable for refusals and kInternal otherwise.
  Status Error(const std::string& call, nvmlReturn_t r) const {
    std::string msg = call + ": " + error_string_(r) + " (" + NvmlReturnName(r) + ")";
    if (r == NVML_ERROR_NO_PERMISSION) {
      return Status::Unavailable(msg + "; run perseusd as root or grant clock permissions");
    }
    if (r == NVML_ERROR_NOT_SUPPORTED) return Status::Unavailable(msg + "; this GPU or driver does not support it");
    return Status::Internal(msg);
  }

  nvmlDeviceGetCount_v2_fn get_count_ = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn get_handle_ = nullptr;
  nvmlDeviceGetName_fn get_name_ = nullptr;
  nvmlDeviceGetUUID_fn get_uuid_ = nullptr;
  nvmlDeviceGetSupportedMemoryClocks_fn get_memory_clocks_ = nullptr;
  nvmlDeviceGetSupportedGraphicsClocks_fn get_graphics_clocks_ = nullptr;
  nvmlDeviceSetGpuLockedClocks_fn set_locked_clocks_ = nullptr;
  nvmlDeviceResetGpuLockedClocks_fn reset_locked_clocks_ = nullptr;
  nvmlDeviceGetTotalEnergyConsumption_fn get_energy_ = nullptr;
  nvmlDeviceGetPowerUsage_fn get_power_ = nullptr;
  nvmlDeviceGetClockInfo_fn get_clock_info_ = nullptr;  // optional: null when the library lacks it

  const std::string& path() const { return path_; }

 private:
  NvmlLibrary() = default;
  template <typename Fn>
  Status Resolve(const char* symbol, Fn* fn) {
    dlerror();
    void* p = dlsym(handle_, symbol);
    if (p == nullptr) {
      const char* err = dlerror();
      return Status::NotFound("dlsym(" + std::string(symbol) + ") in " + path_ + ": " +
                              (err != nullptr ? err : "symbol is null"));
    }
    *fn = reinterpret_cast<Fn>(p);
    return Status::Ok();
  }
  // Like Resolve, but a missing symbol leaves `*fn` null.
  template <typename Fn>
  void ResolveOptional(const char* symbol, Fn* fn) {
    if (!Resolve(symbol, fn).ok()) *fn = nullptr;
  }
  Status ResolveAll();

  std::string path_;
  void* handle_ = nullptr;
  bool initialised_ = false;
  nvmlInit_v2_fn init_ = nullptr;
  nvmlShutdown_fn shutdown_ = nullptr;
  nvmlErrorString_fn error_string_ = nullptr;
};

Status NvmlLibrary::ResolveAll() {
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlInit_v2", &init_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlShutdown", &shutdown_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlErrorString", &error_string_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetCount_v2", &get_count_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetHandleByIndex_v2", &get_handle_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetName", &get_name_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetUUID", &get_uuid_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetSupportedMemoryClocks", &get_memory_clocks_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetSupportedGraphicsClocks", &get_graphics_clocks_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceSetGpuLockedClocks", &set_locked_clocks_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceResetGpuLockedClocks", &reset_locked_clocks_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetTotalEnergyConsumption", &get_energy_));
  PERSEUS_RETURN_IF_ERROR(Resolve("nvmlDeviceGetPowerUsage", &get_power_));
  ResolveOptional("nvmlDeviceGetClockInfo", &get_clock_info_);
  return Status::Ok();
}

Result<std::shared_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& requested_path) {
  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->path_ = requested_path.empty() ? DefaultNvmlLibraryPath() : requested_path;
  lib->handle_ = dlopen(lib->path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* err = dlerror();
    return Status::NotFound("dlopen(" + lib->path_ + "): " + (err != nullptr ? err : "unknown error"));
  }
  PERSEUS_RETURN_IF_ERROR(lib->ResolveAll());
  nvmlReturn_t r = lib->init_();
  if (r != NVML_SUCCESS) return lib->Error("nvmlInit_v2", r);
  lib->initialised_ = true;
  return lib;
}

class NvmlGpu : public GpuControl {
 public:
  NvmlGpu(std::shared_ptr<NvmlLibrary> lib, int index, nvmlDevice_t device, std::string name, std::string uuid)
      : lib_(std::move(lib)), label_("GPU " + std::to_string(index)), device_(device),
        name_(std::move(name)), uuid_(std::move(uuid)) {}

  std::string Name() const override { return name_; }
  std::string Uuid() const override { return uuid_; }

  Result<std::vector<int>> SupportedSmClocksMhz() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (supported_mhz_.has_value()) return *supported_mhz_;
    Result<std::vector<int>> clocks = QuerySupportedClocks();
    if (clocks.ok()) supported_mhz_ = clocks.value();
    return clocks;
  }

  Status SetSmClockMhz(int sm_clock_mhz) override {
    Result<std::vector<int>> supported = SupportedSmClocksMhz();
    if (!supported.ok()) return supported.status();
    PERSEUS_RETURN_IF_ERROR(CheckSupportedSmClock(*supported, sm_clock_mhz, label_));
    unsigned f = static_cast<unsigned>(sm_clock_mhz);
    nvmlReturn_t r = lib_->set_locked_clocks_(device_, f, f);
    if (r != NVML_SUCCESS) {
      return lib_->Error(label_ + ": nvmlDeviceSetGpuLockedClocks(" + std::to_string(sm_clock_mhz) + ")", r);
    }
    return Status::Ok();
  }

  Status ResetSmClock() override {
    nvmlReturn_t r = lib_->reset_locked_clocks_(device_);
    if (r != NVML_SUCCESS) return lib_->Error(label_ + ": nvmlDeviceResetGpuLockedClocks", r);
    return Status::Ok();
  }

  Result<double> TotalEnergyJ() override {
    unsigned long long energy_mj = 0;
    nvmlReturn_t r = lib_->get_energy_(device_, &energy_mj);
    if (r != NVML_SUCCESS) return lib_->Error(label_ + ": nvmlDeviceGetTotalEnergyConsumption", r);
    return static_cast<double>(energy_mj) / 1000.0;
  }

  Result<double> PowerW() override {
    unsigned int power_mw = 0;
    nvmlReturn_t r = lib_->get_power_(device_, &power_mw);
    if (r != NVML_SUCCESS) return lib_->Error(label_ + ": nvmlDeviceGetPowerUsage", r);
    return static_cast<double>(power_mw) / 1000.0;
  }

  Result<int> AchievedSmClockMhz() override {
    if (lib_->get_clock_info_ == nullptr) {
      return Status::Unavailable(label_ + ": nvmlDeviceGetClockInfo: not in " + lib_->path());
    }
    unsigned int clock_mhz = 0;
    nvmlReturn_t r = lib_->get_clock_info_(device_, NVML_CLOCK_SM, &clock_mhz);
    if (r != NVML_SUCCESS) return lib_->Error(label_ + ": nvmlDeviceGetClockInfo(NVML_CLOCK_SM)", r);
    return static_cast<int>(clock_mhz);
  }

 private:
  // Calls `query(count, buffer)` until the buffer is large enough.
  template <typename Query>
  Result<std::vector<unsigned>> QueryList(const std::string& call, Query query) {
    std::vector<unsigned> buffer(256);
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned count = static_cast<unsigned>(buffer.size());
      nvmlReturn_t r = query(&count, buffer.data());
      if (r == NVML_ERROR_INSUFFICIENT_SIZE && count > buffer.size()) {
        buffer.resize(count);
        continue;
      }
      if (r != NVML_SUCCESS) return lib_->Error(label_ + ": " + call, r);
      buffer.resize(std::min<size_t>(count, buffer.size()));
      return buffer;
    }
    return Status::Internal(label_ + ": " + call + ": the list kept growing");
  }

  // SM clocks at the highest memory clock, descending.
  Result<std::vector<int>> QuerySupportedClocks() {
    Result<std::vector<unsigned>> memory = QueryList("nvmlDeviceGetSupportedMemoryClocks", [&](unsigned* n, unsigned* c) {
      return lib_->get_memory_clocks_(device_, n, c);
    });
    if (!memory.ok()) return memory.status();
    if (memory->empty()) return Status::Unavailable(label_ + ": NVML reports no supported memory clocks");
    unsigned memory_mhz = *std::max_element(memory->begin(), memory->end());
    Result<std::vector<unsigned>> graphics = QueryList(
        "nvmlDeviceGetSupportedGraphicsClocks(" + std::to_string(memory_mhz) + ")",
        [&](unsigned* n, unsigned* c) { return lib_->get_graphics_clocks_(device_, memory_mhz, n, c); });
    if (!graphics.ok()) return graphics.status();
    std::vector<int> clocks(graphics->begin(), graphics->end());
    std::sort(clocks.rbegin(), clocks.rend());
    clocks.erase(std::unique(clocks.begin(), clocks.end()), clocks.end());
    return clocks;
  }

  std::shared_ptr<NvmlLibrary> lib_;
  std::string label_;
  nvmlDevice_t device_;
  std::string name_;
  std::string uuid_;
  std::mutex mu_;
  std::optional<std::vector<int>> supported_mhz_;  // guarded by mu_
};

}  // namespace

std::string DefaultNvmlLibraryPath() {
  const char* env = std::getenv("PERSEUS_NVML_LIBRARY");
  if (env != nullptr && env[0] != '\0') return env;
  return "libnvidia-ml.so.1";
}

Result<int> CountNvmlGpus(const std::string& library_path) {
  Result<std::shared_ptr<NvmlLibrary>> lib = NvmlLibrary::Load(library_path);
  if (!lib.ok()) return lib.status();
  unsigned count = 0;
  nvmlReturn_t r = (*lib)->get_count_(&count);
  if (r != NVML_SUCCESS) return (*lib)->Error("nvmlDeviceGetCount_v2", r);
  return static_cast<int>(count);
}

Result<std::unique_ptr<GpuControl>> OpenNvmlGpu(int index, const std::string& library_path) {
  std::string label = "GPU " + std::to_string(index);
  if (index < 0) return Status::InvalidArgument(label + ": GPU index must be >= 0");
  Result<std::shared_ptr<NvmlLibrary>> loaded = NvmlLibrary::Load(library_path);
  if (!loaded.ok()) return loaded.status();
  std::shared_ptr<NvmlLibrary> lib = std::move(loaded).value();
  unsigned count = 0;
  nvmlReturn_t r = lib->get_count_(&count);
  if (r != NVML_SUCCESS) return lib->Error("nvmlDeviceGetCount_v2", r);
  if (static_cast<unsigned>(index) >= count) {
    return Status::NotFound(label + ": no such GPU (NVML sees " + std::to_string(count) + ")");
  }
  nvmlDevice_t device = nullptr;
  r = lib->get_handle_(static_cast<unsigned>(index), &device);
  if (r != NVML_SUCCESS) return lib->Error(label + ": nvmlDeviceGetHandleByIndex_v2", r);
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  r = lib->get_name_(device, name, sizeof(name));
  if (r != NVML_SUCCESS) return lib->Error(label + ": nvmlDeviceGetName", r);
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  r = lib->get_uuid_(device, uuid, sizeof(uuid));
  if (r != NVML_SUCCESS) return lib->Error(label + ": nvmlDeviceGetUUID", r);
  name[sizeof(name) - 1] = '\0';
  uuid[sizeof(uuid) - 1] = '\0';
  return std::unique_ptr<GpuControl>(new NvmlGpu(std::move(lib), index, device, name, uuid));
}

}  // namespace perseus::runtime
