#include "vime/engine/model_runner.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "vime/dist/process_group.hpp"
#include "vime/engine/decode_graph.hpp"
#include "vime/engine/routing_record.hpp"
#include "vime/engine/tp_plan_channel.hpp"
#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/model/moe.hpp"
#include "vime/model/paged_forward.hpp"
#include "vime/model/paged_kv_cache.hpp"

namespace vime::engine {
namespace {

using Clock = std::chrono::steady_clock;

// A plan that only tells the followers to stop, park or release (no sequences).
StepPlan control_plan(StepPlan::Op op, int64_t epoch = 0) {
  StepPlan plan;
  plan.op = op;
  plan.epoch = epoch;
  return plan;
}

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

[[noreturn]] void unexpected_plan(const std::string& what) {
  throw Error("tensor-parallel engine: TP rank 0 posted " + what +
              "; every rank must make its engine with the same options");
}

// The number of KV-cache blocks every rank of the group can hold: the least of theirs.
int64_t agreed_kv_blocks(const TensorParallel& tp, int64_t blocks) {
  if (!tp.is_parallel()) return blocks;
  std::vector<at::Tensor> t{
      at::full({1}, blocks, at::TensorOptions().dtype(at::kLong).device(tp.group->device()))};
  tp.group->all_reduce(t, dist::ReduceOp::kMin);
  return t[0].item<int64_t>();
}

std::vector<DecodeRow> decode_rows(const StepPlan& plan) {
  std::vector<DecodeRow> rows;
  for (const auto& s : plan.sequences) {
    if (s.end - s.begin != 1) unexpected_plan("a decode row of more than one position");
    rows.push_back({s.tokens[0], s.begin, s.block_table});
  }
  return rows;
}

std::vector<PagedSequence> paged_batch(const StepPlan& plan) {
  std::vector<PagedSequence> batch;
  for (const auto& s : plan.sequences)
    batch.push_back({s.tokens, s.begin, s.end, &s.block_table, s.wants_logits, s.begin});
  return batch;
}

}  // namespace

ModelRunner::ModelRunner(Model& model, const NativeEngineOptions& options, int64_t max_context)
    : model_(model),
      attention_path_(options.attention_path),
      logprob_mode_(options.logprob_mode),
      sampler_path_(options.sampler_path),
      follower_(model.tensor_parallel().is_parallel() && model.tensor_parallel().rank != 0),
      budget_(kv_cache_budget(model, options, max_context)) {
  const TensorParallel& tp = model.tensor_parallel();
  budget_.max_blocks = agreed_kv_blocks(tp, budget_.max_blocks);
  cache_ = std::make_unique<PagedKvCache>(kv_cache_config(model), model.dtype(), model.device(),
                                          budget_.block_size);
  // Every tensor-parallel rank has one (rank 0 tells the others when to use it).
  if (options.attention_path == PagedAttentionPath::kAuto &&
      options.fixed_shape_decode.value_or(model.device().is_cuda()))
    decode_runner_ = std::make_unique<DecodeGraphRunner>(
        model, *cache_, options.max_running_requests,
        (max_context + budget_.block_size - 1) / budget_.block_size, options.cuda_graphs,
        options.decode_kernel);
  if (tp.is_parallel() && tp.rank == 0) followers_ = std::make_unique<TpPlanChannel>(*tp.group);
}

ModelRunner::~ModelRunner() {
  if (!followers_) return;
  try {
    followers_->post(control_plan(StepPlan::Op::kStop));
  } catch (const std::exception&) {  // the store is gone: the followers stop on their own
  }
}

SampledTokens ModelRunner::run(StepPlan& plan) {
  const auto start = Clock::now();
  cache_->resize(plan.num_blocks);  // the cache only grows
  cache_->copy_blocks(plan.copies);
  if (!follower_) route(plan);  // after the resize: a cache that moved needs its graphs again
  const auto posting = Clock::now();
  if (followers_) followers_->post(plan);
  const auto forwarding = Clock::now();
  at::Tensor routed;
  const at::Tensor logits = forward(plan, routed);
  if (followers_) followers_->tidy();  // while the device runs the step
  const auto sampling = Clock::now();
  SampledTokens sampled = sample(logits, plan);
  routing_.ids.clear();
  routing_.width = 0;
  if (routed.defined()) {  // read back after the sampling's wait for the device
    const auto host = routed.to(at::kCPU).contiguous();
    routing_.ids.assign(host.data_ptr<int32_t>(), host.data_ptr<int32_t>() + host.numel());
    routing_.width = routing_row_width(model_.config());
  }
  times_.post_seconds += seconds_between(posting, forwarding);
  times_.forward_seconds += seconds_between(start, posting) + seconds_between(forwarding, sampling);
  times_.sample_seconds += seconds_between(sampling, Clock::now());
  ++times_.steps;
  return sampled;
}

void ModelRunner::route(StepPlan& plan) const {
  plan.fixed_shape_decode = plan.capture_graph = false;
  // Decode-only steps take the fixed-shape path where its buffers hold them.
  if (!decode_runner_ || plan.prefill_tokens > 0 || plan.empty()) return;
  if (!decode_runner_->accepts(decode_rows(plan))) return;
  plan.fixed_shape_decode = true;
  plan.capture_graph = decode_runner_->will_capture(static_cast<int64_t>(plan.sequences.size()));
}

at::Tensor ModelRunner::forward(const StepPlan& plan, at::Tensor& routed) {
  // Routing is read on the rank that schedules (the others route alike).
  const bool record = plan.record_routing && !follower_ && model_.config().is_moe();
  if (!plan.fixed_shape_decode) {
    MoeRouting routing;
    std::optional<MoeRoutingScope> scope;
    if (record) scope.emplace(&routing);
    auto logits = paged_forward(model_, *cache_, paged_batch(plan), attention_path_);
    scope.reset();
    if (record) {
      int64_t tokens = 0;
      for (const auto& s : plan.sequences) tokens += s.end - s.begin;
      routed = routing_rows(model_.config(), routing.chosen, tokens, model_.device());
    }
    return logits;
  }
  const auto rows = decode_rows(plan);
  if (!decode_runner_ || !decode_runner_->accepts(rows))
    unexpected_plan("a fixed-shape decode step this rank's engine cannot run");
  auto logits = decode_runner_->run(rows, plan.capture_graph);
  if (record) routed = decode_runner_->routed_experts(static_cast<int64_t>(rows.size()));
  return logits;
}

SampledTokens ModelRunner::sample(const at::Tensor& logits, const StepPlan& plan) const {
  if (follower_) return {};  // rank 0 samples from the same logits
  return sample_tokens(logits, plan.samples, logprob_mode_, sampler_path_);
}

void ModelRunner::release() {
  if (decode_runner_) decode_runner_->reset();
  cache_->release();
  if (followers_) followers_->post(control_plan(StepPlan::Op::kRelease, ++releases_));
}

void ModelRunner::park() {
  if (followers_) followers_->post(control_plan(StepPlan::Op::kPark, ++parks_));
}

at::Device ModelRunner::device() const { return model_.device(); }

int64_t ModelRunner::kv_cache_bytes() const { return cache_->bytes(); }

int64_t ModelRunner::cuda_graphs() const {
  return decode_runner_ ? decode_runner_->graphs_captured() : 0;
}

}  // namespace vime::engine
