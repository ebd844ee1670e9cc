// One engine step as the Scheduler plans it and every ModelRunner runs it: the sequences of the
// forward (prefill chunks and decode rows: their new tokens, positions and block tables), the
// blocks to copy on write first, and the KV cache's size. Under tensor parallelism it is the one
// thing TP rank 0 sends the other ranks (TpPlanChannel), with the ops that pause, free or stop
// their engines.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vime/engine/sampler.hpp"

namespace vime::engine {

// A step's routed experts, read back when the plan recorded them (StepPlan::record_routing):
// [step tokens][width] expert ids, width = num_layers * topk, every position of the forward in
// the plan's order (engine/routing_record.hpp).
struct StepRouting {
  std::vector<int32_t> ids;
  int64_t width = 0;
};

struct StepPlan {
  enum class Op : int32_t {
    kStep = 0,     // one forward over `sequences`
    kPark = 1,     // the leader paused (epoch: its count of pauses)
    kRelease = 2,  // the leader freed its KV cache (epoch: its count of releases)
    kStop = 3,     // the leader's engine is gone
  };
  struct Sequence {
    std::vector<int32_t> tokens;  // positions [begin, end)
    int64_t begin = 0, end = 0;
    std::vector<int32_t> block_table;
    bool wants_logits = false;
  };
  Op op = Op::kStep;
  int64_t epoch = 0;
  int64_t num_blocks = 0;  // the cache's size for this step
  // A decode-only step through the fixed-shape runner (engine/decode_graph.hpp) rather than
  // paged_forward, and whether rank 0 captures its CUDA graph in it (every rank must). The
  // ModelRunner of rank 0 (or of a lone rank) decides.
  bool fixed_shape_decode = false;
  bool capture_graph = false;
  std::vector<std::pair<int32_t, int32_t>> copies;  // copy-on-write blocks, before the forward
  std::vector<Sequence> sequences;

  // The scheduling rank's own, not sent: how to sample each sequence that wants logits, in order,
  // and the step's shape (a decode row: one new position of a request that has output).
  std::vector<SamplerRow> samples;
  int64_t prefill_tokens = 0, decode_rows = 0;
  // A request of the step wants its routed experts: the runner reads them back (only rank 0's
  // matter under tensor parallelism: every rank routes alike).
  bool record_routing = false;

  bool empty() const { return sequences.empty(); }
  std::string encode() const;
  // Throws vime::Error on a truncated or malformed payload.
  static StepPlan decode(const std::string& bytes);
};

}  // namespace vime::engine
