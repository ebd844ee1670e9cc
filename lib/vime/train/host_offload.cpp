#include "vime/train/host_offload.hpp"

#include <ATen/ATen.h>
#include <c10/core/StorageImpl.h>

#include <set>

#include "vime/error.hpp"

namespace vime {
namespace {

// The whole storage as a 1-D byte tensor.
at::Tensor bytes_of(const c10::Storage& storage, size_t nbytes) {
  auto t = at::empty({0}, at::TensorOptions().dtype(at::kByte).device(storage.device()));
  t.set_(storage, 0, {static_cast<int64_t>(nbytes)}, {1});
  return t;
}

}  // namespace

void HostOffload::offload(const std::vector<at::Tensor>& tensors) {
  if (is_offloaded_) return;
  entries_.clear();
  bytes_ = 0;
  std::set<const c10::StorageImpl*> seen;
  for (const auto& t : tensors) {
    if (!t.defined() || t.storage().nbytes() == 0) continue;
    const c10::Storage& storage = t.storage();
    if (!seen.insert(storage.unsafeGetStorageImpl()).second) continue;
    if (storage.unsafeGetStorageImpl()->allocator() == nullptr) {
      throw Error("--offload-train: a tensor's memory has no allocator to reload it with");
    }
    Entry e{storage, at::Tensor(), storage.nbytes()};
    auto options = at::TensorOptions().dtype(at::kByte);
    if (storage.device().is_cuda()) options = options.pinned_memory(true);
    e.host = at::empty({static_cast<int64_t>(e.nbytes)}, options);
    e.host.copy_(bytes_of(storage, e.nbytes));
    bytes_ += static_cast<int64_t>(e.nbytes);
    entries_.push_back(std::move(e));
  }
  // Only now free: a failed copy above leaves everything in place.
  for (auto& e : entries_) {
    auto* impl = e.storage.unsafeGetStorageImpl();
    impl->set_data_ptr_noswap(at::DataPtr(nullptr, e.storage.device()));
    impl->set_nbytes(0);
  }
  is_offloaded_ = true;
}

void HostOffload::reload() {
  if (!is_offloaded_) return;
  for (auto& e : entries_) {
    auto* impl = e.storage.unsafeGetStorageImpl();
    impl->set_data_ptr_noswap(impl->allocator()->allocate(e.nbytes));
    impl->set_nbytes(e.nbytes);
    bytes_of(e.storage, e.nbytes).copy_(e.host);
    e.host = at::Tensor();
  }
  entries_.clear();
  is_offloaded_ = false;
}

}  // namespace vime
