// Which rows of a context-parallel rank's shard (model/context_parallel.hpp) the trainer reads:
// those that predict a response token (log-probs, entropy, values) and those that hold a real
// token (a custom loss's logits), each with its row in the whole micro-batch, so that gather_rows
// puts every rank's part back in the single-rank order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "vime/model/model.hpp"
#include "vime/train/log_probs.hpp"

namespace vime::train {

struct CpRows {
  at::Tensor rows;     // [k] int64: local rows
  at::Tensor targets;  // [k] int64: the response token each predicts (response rows only)
  at::Tensor dest;     // [k] int64: its index in the whole [num_whole]
  int64_t num_whole = 0;
};

// `whole`: response_rows of the whole micro-batch; `shard`: this rank's shard of it.
CpRows cp_response_rows(const PackedBatch& shard, const ResponseRows& whole);
// The shard's rows that hold a token of the whole batch (not padding).
CpRows cp_token_rows(const PackedBatch& shard);

}  // namespace vime::train
