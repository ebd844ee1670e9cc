#include "vime/model/kv_cache.hpp"

#include <ATen/ATen.h>

#include <algorithm>

#include "vime/error.hpp"

namespace vime {
namespace {

// The smallest power of two >= need (at least `floor`), capped at `limit`.
int64_t grown(int64_t current, int64_t need, int64_t floor, int64_t limit) {
  if (need <= current) return current;
  int64_t size = std::max<int64_t>(floor, 1);
  while (size < need) size *= 2;
  return std::min(size, std::max(limit, need));
}

}  // namespace

KvCache::KvCache(const ModelConfig& config, at::ScalarType dtype, const at::Device& device,
                 int64_t max_rows, int64_t max_length)
    : num_layers_(config.num_layers),
      kv_heads_(config.num_key_value_heads),
      head_dim_(config.head_dim),
      dtype_(dtype),
      device_(device),
      max_rows_(max_rows),
      max_length_(max_length) {}

void KvCache::reserve(int64_t rows, int64_t length) {
  if (rows > max_rows_ || length > max_length_)
    throw Error("KV cache: " + std::to_string(rows) + " rows of " + std::to_string(length) +
                " positions exceed the engine's limits (" + std::to_string(max_rows_) + " x " +
                std::to_string(max_length_) + ")");
  const int64_t new_rows = grown(rows_, rows, 8, max_rows_);
  const int64_t new_capacity = grown(capacity_, length, 256, max_length_);
  if (new_rows == rows_ && new_capacity == capacity_) return;
  auto options = at::TensorOptions().dtype(dtype_).device(device_);
  auto grow = [&](std::vector<at::Tensor>& tensors) {
    tensors.resize(num_layers_);
    for (auto& t : tensors) {
      auto fresh = at::zeros({new_rows, kv_heads_, new_capacity, head_dim_}, options);
      if (t.defined()) fresh.narrow(0, 0, rows_).narrow(2, 0, capacity_).copy_(t);
      t = fresh;  // one layer at a time, so growing needs one layer's worth of extra memory
    }
  };
  grow(keys_);
  grow(values_);
  rows_ = new_rows;
  capacity_ = new_capacity;
}

void KvCache::move_row(int64_t from, int64_t to, int64_t length) {
  if (from == to || length <= 0) return;
  for (auto* tensors : {&keys_, &values_})
    for (auto& t : *tensors) t[to].narrow(1, 0, length).copy_(t[from].narrow(1, 0, length));
}

void KvCache::release() {
  keys_.clear();
  values_.clear();
  rows_ = capacity_ = 0;
}

int64_t KvCache::bytes() const { return bytes_after_reserve(0, 0); }

int64_t KvCache::bytes_after_reserve(int64_t rows, int64_t length) const {
  const int64_t r = grown(rows_, rows, 8, max_rows_);
  const int64_t c = grown(capacity_, length, 256, max_length_);
  return 2 * num_layers_ * r * kv_heads_ * c * head_dim_ *
         static_cast<int64_t>(c10::elementSize(dtype_));
}

}  // namespace vime
