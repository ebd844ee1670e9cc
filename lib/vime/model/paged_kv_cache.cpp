#include "vime/model/paged_kv_cache.hpp"

#include <ATen/ATen.h>

#include "vime/error.hpp"

namespace vime {

PagedKvCache::PagedKvCache(const ModelConfig& config, at::ScalarType dtype,
                           const at::Device& device, int64_t block_size)
    : latent_(config.is_mla()),
      num_layers_(config.num_layers),
      kv_heads_(config.is_mla() ? 1 : config.num_key_value_heads),
      head_dim_(config.is_mla() ? config.mla.kv_lora_rank + config.mla.qk_rope_head_dim
                                : config.head_dim),
      dtype_(dtype),
      device_(device),
      block_size_(block_size) {
  if (block_size <= 0) throw Error("PagedKvCache: block_size must be positive");
}

int64_t PagedKvCache::block_bytes(const ModelConfig& config, at::ScalarType dtype,
                                  int64_t block_size) {
  const int64_t elements = config.is_mla() ? config.mla.kv_lora_rank + config.mla.qk_rope_head_dim
                                           : 2 * config.num_key_value_heads * config.head_dim;
  return config.num_layers * block_size * elements * static_cast<int64_t>(c10::elementSize(dtype));
}

void PagedKvCache::resize(int64_t num_blocks) {
  if (num_blocks <= num_blocks_) return;
  auto options = at::TensorOptions().dtype(dtype_).device(device_);
  auto grow = [&](std::vector<at::Tensor>& tensors) {
    tensors.resize(num_layers_);
    for (auto& t : tensors) {
      auto fresh = at::zeros({num_blocks, block_size_, kv_heads_, head_dim_}, options);
      if (t.defined() && num_blocks_ > 0) fresh.narrow(0, 0, num_blocks_).copy_(t);
      t = fresh;  // one layer at a time: growing needs one layer's worth of extra memory
    }
  };
  grow(keys_);
  if (latent_) {
    values_ = keys_;
  } else {
    grow(values_);
  }
  num_blocks_ = num_blocks;
}

void PagedKvCache::copy_blocks(const std::vector<std::pair<int32_t, int32_t>>& from_to) {
  if (from_to.empty()) return;
  std::vector<int64_t> from, to;
  for (auto [f, t] : from_to) {
    if (f < 0 || t < 0 || f >= num_blocks_ || t >= num_blocks_)
      throw Error("PagedKvCache::copy_blocks: block index outside the cache");
    from.push_back(f);
    to.push_back(t);
  }
  auto index = [&](const std::vector<int64_t>& v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device_);
  };
  const auto from_t = index(from), to_t = index(to);
  for (auto* tensors : {&keys_, &values_}) {
    if (latent_ && tensors == &values_) break;  // the same tensors as keys_
    for (auto& t : *tensors) t.index_copy_(0, to_t, t.index_select(0, from_t));
  }
}

void PagedKvCache::release() {
  keys_.clear();
  values_.clear();
  num_blocks_ = 0;
}

int64_t PagedKvCache::bytes() const {
  return (latent_ ? 1 : 2) * num_layers_ * num_blocks_ * block_size_ * kv_heads_ * head_dim_ *
         static_cast<int64_t>(c10::elementSize(dtype_));
}

}  // namespace vime
