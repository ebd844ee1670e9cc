// The model's forward against a KvCache, for generation: a prefill of several new sequences
// packed end to end (their K/V written to their cache rows) and a decode step of one new token
// for each of the first `batch` rows. Call under no-grad (at::AutoGradMode(false)).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/model/kv_cache.hpp"
#include "vime/model/model.hpp"

namespace vime {

// sequences[i] goes to cache row rows[i] at positions 0 .. size-1. The cache must hold the rows
// and lengths (KvCache::reserve). Returns [num_sequences, vocab_size] logits of each sequence's
// last token, in the model dtype.
at::Tensor prefill_forward(Model& model, KvCache& cache,
                           const std::vector<std::vector<int64_t>>& sequences,
                           const std::vector<int64_t>& rows);

// Row b (b < tokens.size()) holds positions [0, positions[b]) and gets tokens[b] at positions[b].
// Returns [batch, vocab_size] logits.
at::Tensor decode_forward(Model& model, KvCache& cache, const std::vector<int64_t>& tokens,
                          const std::vector<int64_t>& positions);

// Decode attention: q [batch, heads, head_dim] against rows [0, batch) of one layer's cache,
// row b reading positions [0, lengths[b]). lengths: [batch] int64 on the cache's device.
at::Tensor cached_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& lengths, int64_t max_length, double scale);

}  // namespace vime
