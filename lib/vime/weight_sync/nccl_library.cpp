#include "vime/weight_sync/nccl_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>

#include "vime/error.hpp"

namespace vime::weight_sync {
namespace {

struct DtypeInfo {
  std::string_view name;
  NcclDataType nccl;
  int64_t item_size;
};
constexpr DtypeInfo kDtypes[] = {
    {"int8", kNcclInt8, 1},       {"uint8", kNcclUint8, 1},       {"int32", kNcclInt32, 4},
    {"int64", kNcclInt64, 8},     {"float16", kNcclFloat16, 2},   {"float32", kNcclFloat32, 4},
    {"float64", kNcclFloat64, 8}, {"bfloat16", kNcclBfloat16, 2},
};

// getattr(torch, name) also knows these spellings.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"half", "float16"}, {"float", "float32"}, {"double", "float64"},
    {"int", "int32"},    {"long", "int64"},
};

const DtypeInfo* find_dtype(std::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  for (const auto& [alias, canonical] : kAliases) {
    if (name == alias) name = canonical;
  }
  for (const auto& d : kDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

template <class Fn>
void bind(void* handle, const std::string& path, const char* symbol, Fn*& out) {
  void* p = ::dlsym(handle, symbol);
  if (p == nullptr) {
    throw Error("NCCL library " + path + " has no " + symbol + " (NCCL >= 2.7 is needed)");
  }
  out = reinterpret_cast<Fn*>(p);
}

std::string default_library_path() {
  if (const char* file = std::getenv("VIME_NCCL_LIB"); file != nullptr && *file != '\0') {
    return file;
  }
  if (const char* dir = std::getenv("VIME_NCCL_LIB_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir) + "/libnccl.so.2";
  }
  return "libnccl.so.2";
}

}  // namespace

NcclDataType nccl_data_type(std::string_view dtype_name) {
  if (const auto* d = find_dtype(dtype_name)) return d->nccl;
  throw Error("NCCL weight transfer: dtype \"" + std::string(dtype_name) +
              "\" cannot be sent unpacked (int8, uint8, int32, int64, float16, float32, float64, "
              "bfloat16 can); use packed mode (--vllm-weight-sync-packed)");
}

int64_t dtype_item_size(std::string_view dtype_name) {
  if (const auto* d = find_dtype(dtype_name)) return d->item_size;
  throw Error("NCCL weight transfer: unknown dtype \"" + std::string(dtype_name) + "\"");
}

NcclLibrary::NcclLibrary(const std::string& path) : path_(path) {
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = ::dlerror();
    throw Error("NCCL weight transfer needs libnccl.so.2 and a CUDA GPU: cannot load " + path +
                " (" + (why ? why : "unknown error") +
                "); set VIME_NCCL_LIB_DIR to the folder of PyTorch's NCCL (source "
                "/opt/vime-deps/env.sh), or use the disk weight transfer");
  }
  try {
    bind(handle_, path_, "ncclGetUniqueId", get_unique_id);
    bind(handle_, path_, "ncclCommInitRank", comm_init_rank);
    bind(handle_, path_, "ncclAllReduce", all_reduce);
    bind(handle_, path_, "ncclBroadcast", broadcast);
    bind(handle_, path_, "ncclCommAbort", comm_abort);
    bind(handle_, path_, "ncclCommGetAsyncError", comm_get_async_error);
    bind(handle_, path_, "ncclGetErrorString", get_error_string);
    bind(handle_, path_, "ncclGetVersion", get_version);
    bind(handle_, path_, "ncclGroupStart", group_start);
    bind(handle_, path_, "ncclGroupEnd", group_end);
  } catch (...) {
    ::dlclose(handle_);
    throw;
  }
}

NcclLibrary::~NcclLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

const NcclLibrary& NcclLibrary::get() {
  // Loaded once and never unloaded: communicators may outlive any owner object.
  static std::mutex mutex;
  static std::unique_ptr<NcclLibrary> library;
  std::lock_guard<std::mutex> lock(mutex);
  if (!library) library = std::make_unique<NcclLibrary>(default_library_path());
  return *library;
}

std::string NcclLibrary::version() const {
  int v = 0;
  check(get_version(&v), "ncclGetVersion");
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older 2.x used major*1000 + minor*100.
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

void NcclLibrary::check(int result, const std::string& what) const {
  if (result == kNcclSuccess) return;
  const char* text = get_error_string ? get_error_string(result) : nullptr;
  throw Error(what + ": NCCL error " + std::to_string(result) + ": " + (text ? text : "unknown") +
              " (NCCL_DEBUG=WARN prints NCCL's reason)");
}

}  // namespace vime::weight_sync
