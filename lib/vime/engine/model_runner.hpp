// The engine's device side, the same on every rank: the paged KV cache (sized by
// kv_cache_budget), the fixed-shape decode runner (CUDA graphs), the forward and the sampler.
// run(plan) is one engine step. Under tensor parallelism TP rank 0's runner posts each plan it
// runs, and its releases, pauses and end, to the other ranks (TpPlanChannel), whose runners run
// the same plans on their own shards and KV heads (engine/tp_follower.hpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "vime/engine/kv_cache_budget.hpp"
#include "vime/engine/native_engine_options.hpp"
#include "vime/engine/sampler.hpp"
#include "vime/engine/step_plan.hpp"

namespace vime {
class Model;
class PagedKvCache;
}  // namespace vime

namespace vime::engine {

class DecodeGraphRunner;
class TpPlanChannel;

// Host seconds so far: posting plans to the other TP ranks (rank 0), issuing forwards (the device
// runs them meanwhile), sampling (waits for the device); and the steps run.
struct RunnerTimes {
  double post_seconds = 0;
  double forward_seconds = 0;
  double sample_seconds = 0;
  int64_t steps = 0;
};

class ModelRunner {
 public:
  // Sizes the KV cache (a collective over the tensor-parallel group: every rank takes the least
  // number of blocks); allocates nothing yet.
  ModelRunner(Model& model, const NativeEngineOptions& options, int64_t max_context);
  ~ModelRunner();  // TP rank 0: tells the other ranks its engine is gone
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // One step on this rank: the cache grown to plan.num_blocks and its copies made, the forward,
  // then the sampling of plan.samples. A rank that schedules (a lone rank, TP rank 0) first
  // routes the plan (fixed-shape decode, graph capture) and posts it; the other ranks run it as
  // posted and sample nothing. Throws vime::Error for a plan this rank cannot run.
  SampledTokens run(StepPlan& plan);
  void release();  // frees the KV cache and the CUDA graphs
  void park();     // the engine paused (TP rank 0 tells the other ranks)

  const KvCacheBudget& kv_budget() const { return budget_; }
  at::Device device() const;
  int64_t kv_cache_bytes() const;
  int64_t cuda_graphs() const;
  const RunnerTimes& times() const { return times_; }
  // The last run()'s routed experts when its plan recorded them (else empty).
  const StepRouting& routing() const { return routing_; }

 private:
  void route(StepPlan& plan) const;
  // The step's logits; `routed` gets its routing when the plan records it (routing_record.hpp).
  at::Tensor forward(const StepPlan& plan, at::Tensor& routed);
  SampledTokens sample(const at::Tensor& logits, const StepPlan& plan) const;

  Model& model_;
  const PagedAttentionPath attention_path_;
  const LogProbMode logprob_mode_;
  const SamplerPath sampler_path_;
  const bool follower_;  // a TP rank > 0: runs rank 0's plans
  KvCacheBudget budget_;
  std::unique_ptr<PagedKvCache> cache_;
  std::unique_ptr<DecodeGraphRunner> decode_runner_;  // reads cache_; null: decode runs unpadded
  std::unique_ptr<TpPlanChannel> followers_;          // TP rank 0's
  int64_t parks_ = 0, releases_ = 0;
  RunnerTimes times_;
  StepRouting routing_;
};

}  // namespace vime::engine
