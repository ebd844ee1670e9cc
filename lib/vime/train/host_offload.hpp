// --offload-train's mechanism: the storages behind some tensors move to host memory (pinned when
// they live on a GPU) and their device memory is freed, as FSDP frees a storage by resizing it
// to zero bytes; reload() allocates them again from the same allocator and copies the bytes back.
// The tensors and every view of them stay valid objects throughout, but must not be touched
// while offloaded.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace vime {

class HostOffload {
 public:
  // Each distinct storage once; undefined and empty tensors are skipped.
  void offload(const std::vector<at::Tensor>& tensors);
  void reload();
  bool is_offloaded() const { return is_offloaded_; }
  int64_t offloaded_bytes() const { return bytes_; }

 private:
  struct Entry {
    c10::Storage storage;
    at::Tensor host;  // the bytes while offloaded
    size_t nbytes = 0;
  };
  std::vector<Entry> entries_;
  bool is_offloaded_ = false;
  int64_t bytes_ = 0;
};

}  // namespace vime
