// The engine's KV cache: per layer one K and one V tensor [rows, kv_heads, capacity, head_dim],
// a row per running sequence. Rows are kept dense (the engine moves the last row into a finished
// one), so a decode step reads rows [0, batch) and positions [0, longest) as plain strided views:
// no gather, no block table, and [batch * kv_heads, length, head_dim] is a valid bmm operand.
// Both dimensions grow geometrically on demand (capped at the engine's limits) and release() frees
// everything; the price against paged blocks is the padding of short rows up to the longest one.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/model/model_config.hpp"

namespace vime {

class KvCache {
 public:
  KvCache(const ModelConfig& config, at::ScalarType dtype, const at::Device& device,
          int64_t max_rows, int64_t max_length);

  // Makes room for `rows` rows of `length` positions, keeping what is cached.
  void reserve(int64_t rows, int64_t length);
  // Copies the first `length` positions of row `from` into row `to` (every layer).
  void move_row(int64_t from, int64_t to, int64_t length);
  void release();  // frees the memory; reserve() allocates again

  const at::Tensor& keys(int64_t layer) const { return keys_[layer]; }
  const at::Tensor& values(int64_t layer) const { return values_[layer]; }
  int64_t rows() const { return rows_; }
  int64_t capacity() const { return capacity_; }
  int64_t bytes() const;
  // What bytes() would be after reserve(rows, length).
  int64_t bytes_after_reserve(int64_t rows, int64_t length) const;

 private:
  int64_t num_layers_, kv_heads_, head_dim_;
  at::ScalarType dtype_;
  at::Device device_;
  int64_t max_rows_, max_length_;
  int64_t rows_ = 0, capacity_ = 0;
  std::vector<at::Tensor> keys_, values_;
};

}  // namespace vime
