// The model's forward against the engine's paged KV cache, for generation: prefill chunks and
// decode rows of several sequences packed into one forward, their new K/V written to their blocks.
// Call under no-grad (at::AutoGradMode(false)).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <span>
#include <vector>

#include "vime/model/model.hpp"
#include "vime/model/paged_attention.hpp"
#include "vime/model/paged_kv_cache.hpp"

namespace vime {

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

}  // namespace vime
