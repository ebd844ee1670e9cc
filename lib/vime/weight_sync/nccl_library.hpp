// libnccl.so.2 loaded at run time (dlopen), so one source builds on the CPU-only dev machines and
// on the GPU machine, and fails with one clear vime::Error where NCCL is missing. Only the handful
// of entry points the weight transfer needs; the prototypes copy nccl.h (stable since NCCL 2.0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vime::weight_sync {

struct NcclUniqueId {
  char internal[128];
};
using NcclComm = struct NcclCommOpaque*;
using CudaStream = void*;  // cudaStream_t; nullptr is the legacy default stream ATen runs on

// nccl.h's ncclDataType_t values (= vLLM's ncclDataTypeEnum).
enum NcclDataType : int {
  kNcclInt8 = 0,
  kNcclUint8 = 1,
  kNcclInt32 = 2,
  kNcclInt64 = 4,
  kNcclFloat16 = 6,
  kNcclFloat32 = 7,
  kNcclFloat64 = 8,
  kNcclBfloat16 = 9,
};
inline constexpr int kNcclSum = 0;  // ncclRedOp_t
inline constexpr int kNcclSuccess = 0;
inline constexpr int kNcclInProgress = 7;

// The NCCL type of a torch dtype name as vLLM's update_info spells it ("bfloat16"); throws
// vime::Error for a dtype vLLM cannot receive unpacked (e.g. float8_e4m3fn).
NcclDataType nccl_data_type(std::string_view dtype_name);
// Bytes per element of those dtype names (1, 2, 4 or 8); throws vime::Error on an unknown name.
int64_t dtype_item_size(std::string_view dtype_name);

class NcclLibrary {
 public:
  // The process-wide library: $VIME_NCCL_LIB (a file) if set, else $VIME_NCCL_LIB_DIR/libnccl.so.2,
  // else libnccl.so.2 from the loader's path (the copy LibTorch already loaded, when it did).
  // Throws vime::Error naming what was tried when none loads.
  static const NcclLibrary& get();
  // Loads `path` (a file name or a path) without caching: for tests and explicit choices.
  explicit NcclLibrary(const std::string& path);
  ~NcclLibrary();
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  // "2.28.9".
  std::string version() const;
  // Throws vime::Error "<what>: NCCL error <n>: <ncclGetErrorString>" unless `result` is success.
  void check(int result, const std::string& what) const;

  int (*get_unique_id)(NcclUniqueId* id) = nullptr;
  int (*comm_init_rank)(NcclComm* comm, int nranks, NcclUniqueId id, int rank) = nullptr;
  int (*all_reduce)(const void* send, void* recv, size_t count, int datatype, int op, NcclComm comm,
                    CudaStream stream) = nullptr;
  int (*broadcast)(const void* send, void* recv, size_t count, int datatype, int root,
                   NcclComm comm, CudaStream stream) = nullptr;
  int (*comm_abort)(NcclComm comm) = nullptr;
  int (*comm_get_async_error)(NcclComm comm, int* async_error) = nullptr;
  const char* (*get_error_string)(int result) = nullptr;
  int (*get_version)(int* version) = nullptr;
  int (*group_start)() = nullptr;
  int (*group_end)() = nullptr;

 private:
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace vime::weight_sync
