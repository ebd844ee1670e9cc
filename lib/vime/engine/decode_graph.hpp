// Decode-only engine steps at fixed shapes: the rows go through one pinned staging buffer into
// static device buffers, padded to a batch-size bucket (decode_batch.hpp), and the model's decode
// forward (paged_decode_forward) runs eagerly or, on CUDA with graphs on, as a CUDA graph captured
// lazily per bucket (on a side stream, all buckets in one memory pool) and replayed after. A
// graph holds the addresses of the weights and of the KV cache: when any of them changes (the cache
// grew or was released), the graphs are captured again. The logits stay on the device; sampling
// is the caller's. Under tensor parallelism every rank runs one, on its shards and its KV heads,
// the collectives captured with the rest; the batch is padded to the same bucket on every rank.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "vime/engine/decode_batch.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_decode.hpp"
#include "vime/model/paged_kv_cache.hpp"

namespace vime::engine {

class DecodeGraphRunner {
 public:
  // max_batch rows at most, block tables of at most max_blocks blocks. `graphs`: capture CUDA
  // graphs where the build and the device allow (else every step runs eagerly). kernel: how the
  // CUDA decode kernel runs (split-K, lanes; its own choice per bucket by default).
  DecodeGraphRunner(Model& model, PagedKvCache& cache, int64_t max_batch, int64_t max_blocks,
                    bool graphs, PagedDecodeKernel kernel = {});
  ~DecodeGraphRunner();
  DecodeGraphRunner(const DecodeGraphRunner&) = delete;
  DecodeGraphRunner& operator=(const DecodeGraphRunner&) = delete;

  // Whether these rows fit the static buffers (else run them another way).
  bool accepts(std::span<const DecodeRow> rows) const;
  // Whether run() of `rows` rows would capture a graph now (none yet for their bucket, or the
  // weights or the cache moved).
  bool will_capture(int64_t rows) const;
  // [rows.size(), vocab_size] logits of the step (a view of a static buffer when replayed: valid
  // until the next run()). `capture` overrides will_capture() (tensor parallelism: every rank
  // captures when rank 0 does, since a capture runs the forward's collectives once more): true
  // captures, false replays a graph still valid, else runs eagerly. A rank that cannot capture
  // runs the forward twice where told to capture.
  at::Tensor run(std::span<const DecodeRow> rows, std::optional<bool> capture = std::nullopt);
  // An MoE model's routing of the last run()'s first `rows` rows: [rows, num_layers, topk] int32
  // on the device (routing_record.hpp; a view of a static buffer the graph writes; valid until
  // the next run()). Undefined for a dense model.
  at::Tensor routed_experts(int64_t rows) const;
  // Drops the captured graphs and their memory pool's blocks (release_memory).
  void reset();
  int64_t graphs_captured() const;
  int64_t graph_replays() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::engine
