// The model's forward against a KvCache, for generation: a prefill of several new sequences
// packed end to end (their K/V written to their cache rows) and a decode step of one new token
// for each of the first `batch` rows. Call under no-grad (at::AutoGradMode(false)).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <span>
#include <vector>

#include "vime/model/kv_cache.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_attention.hpp"
#include "vime/model/paged_kv_cache.hpp"

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

// One sequence's part of a paged step: positions [begin, end) of `tokens` are computed and their
// K/V written to the blocks of `block_table` (which must cover them); positions [0, begin) are
// read from the cache. A prefill is begin = 0 (or the end of a shared prefix), a prefill chunk
// ends early, a decode step is end = begin + 1.
struct PagedSequence {
  std::span<const int32_t> tokens;
  int64_t begin = 0, end = 0;
  const std::vector<int32_t>* block_table = nullptr;
  bool wants_logits = false;  // the logits of position end - 1 come back
  int64_t tokens_offset = 0;  // tokens[0] is position tokens_offset (0: the whole sequence)
};

// Prefill chunks and decode rows in one forward. Returns [sequences wanting logits, vocab_size],
// in their order, in the model dtype.
at::Tensor paged_forward(Model& model, PagedKvCache& cache, const std::vector<PagedSequence>& batch,
                         PagedAttentionPath path = PagedAttentionPath::kAuto);

// Decode attention: q [batch, heads, head_dim] against rows [0, batch) of one layer's cache,
// row b reading positions [0, lengths[b]). lengths: [batch] int64 on the cache's device.
at::Tensor cached_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& lengths, int64_t max_length, double scale);

}  // namespace vime
