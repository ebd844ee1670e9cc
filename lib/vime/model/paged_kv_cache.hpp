// The engine's paged KV cache: per layer one K and one V tensor [num_blocks, block_size, kv_heads,
// head_dim] (flash attention's paged layout). A sequence's positions live in the blocks of its
// block table (engine::BlockManager keeps the tables); a token at position p of a sequence is slot
// table[p / block_size] * block_size + p % block_size of the flattened [num_blocks * block_size,
// kv_heads, head_dim] view. The tensors are allocated on first use, grow (keeping their content)
// when the block manager grows, and release() frees them. A multi-head-latent-attention model
// (DeepSeek-V3) caches one latent row per token instead, [num_blocks, block_size, 1, kv_lora_rank +
// qk_rope_head_dim] (the normalised latent, then the rotated RoPE key; paged_mla.hpp), and
// values(layer) is the same tensor as keys(layer).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "vime/model/model_config.hpp"

namespace vime {

class PagedKvCache {
 public:
  PagedKvCache(const ModelConfig& config, at::ScalarType dtype, const at::Device& device,
               int64_t block_size);

  // Bytes of K and V (or the latent rows) over all layers for one block of `block_size` positions.
  static int64_t block_bytes(const ModelConfig& config, at::ScalarType dtype, int64_t block_size);

  // Makes the cache hold exactly `num_blocks` blocks (>= the current count), keeping content.
  void resize(int64_t num_blocks);
  // Copies whole blocks (every layer, K and V): dst[to] = src[from], pairs applied together.
  void copy_blocks(const std::vector<std::pair<int32_t, int32_t>>& from_to);
  void release();  // frees the memory; resize() allocates again

  const at::Tensor& keys(int64_t layer) const { return keys_[layer]; }
  const at::Tensor& values(int64_t layer) const { return values_[layer]; }
  int64_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t bytes() const;
  const at::Device& device() const { return device_; }
  bool is_latent() const { return latent_; }

 private:
  bool latent_;
  int64_t num_layers_, kv_heads_, head_dim_;
  at::ScalarType dtype_;
  at::Device device_;
  int64_t block_size_;
  int64_t num_blocks_ = 0;
  std::vector<at::Tensor> keys_, values_;
};

}  // namespace vime
