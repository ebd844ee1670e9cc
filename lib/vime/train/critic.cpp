#include "vime/train/critic.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include "vime/error.hpp"
#include "vime/model/moe.hpp"
#include "vime/train/advantages.hpp"
#include "vime/train/context_parallel_rows.hpp"
#include "vime/train/device_metrics.hpp"
#include "vime/train/dp_schedule.hpp"
#include "vime/train/loss.hpp"
#include "vime/train/train_context.hpp"

namespace vime::train {

Critic::Critic(const Args& args, Model& trunk, RankReducer& reducer, uint64_t seed)
    : args_(args), options_(TrainOptions::from(args)), trunk_(trunk), reducer_(reducer) {
  options_.batching.flops_linear_coeff = 6.0 * static_cast<double>(trunk.config().hidden_size);
  options_.batching.context_parallel_size = trunk.context_parallel().size;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  // Megatron initialises the output layer with --init-method-std.
  const double init_std = args.has("init_method_std") ? args.get_double("init_method_std") : 0.02;
  value_head_ = at::normal(0.0, init_std, {1, trunk.config().hidden_size}, gen,
                           at::TensorOptions().dtype(at::kFloat))
                    .to(trunk.device(), trunk.dtype())
                    .requires_grad_(true);
  NamedTensorList params;
  for (const auto& [name, param] : trunk.named_parameters())
    if (!is_expert_bias(name)) params.emplace_back(name, param);  // fixed, not trained
  params.emplace_back("value_head.weight", value_head_);
  // Under tensor parallelism the value head is replicated (the same seed on every rank, the same
  // gradient from the replicated hidden states): counted once in the grad norm.
  auto tp_norm = TensorParallelNorm::of(trunk);
  if (trunk.tensor_parallel().rank != 0) tp_norm.duplicates.insert("value_head.weight");
  optimizer_ = std::make_unique<Optimizer>(params, OptimizerConfig::from(args),
                                           reducer.process_group(), std::move(tp_norm));
  lr_scheduler_ = std::make_unique<LrScheduler>(LrScheduler::from(args));
}

Critic::~Critic() = default;

at::Tensor Critic::response_values_of(const PackedBatch& packed,
                                      const std::vector<int64_t>& total_lengths,
                                      const std::vector<int64_t>& response_lengths) {
  const auto& cp = trunk_.context_parallel();
  if (cp.is_parallel()) {  // this rank's rows, gathered into the whole order (as the actor's)
    auto shard = shard_for_context_parallel(packed, cp);
    const auto rows =
        cp_response_rows(shard, response_rows(packed.tokens, total_lengths, response_lengths));
    auto hidden = trunk_.forward_hidden(shard).index_select(0, rows.rows);
    auto values = at::linear(hidden, value_head_).to(at::kFloat).squeeze(-1);
    return gather_rows(values, rows.dest, rows.num_whole, cp.group);
  }
  auto values = at::linear(trunk_.forward_hidden(packed), value_head_).to(at::kFloat).squeeze(-1);
  std::vector<at::Tensor> parts;
  int64_t start = 0;
  for (size_t i = 0; i < total_lengths.size(); ++i) {
    parts.push_back(response_values(values.narrow(0, start, total_lengths[i]).unsqueeze(-1),
                                    total_lengths[i], response_lengths[i]));
    start += total_lengths[i];
  }
  return at::cat(parts);
}

std::vector<at::Tensor> Critic::compute_values(const TrainBatch& batch) {
  at::NoGradGuard no_grad;
  std::vector<int64_t> lengths;
  for (const auto& t : batch.tokens) lengths.push_back(static_cast<int64_t>(t.size()));
  // Each rank computes the values of the samples it trains on; then every rank holds all.
  const auto n = static_cast<int64_t>(batch.size());
  const auto plans =
      plan_steps(lengths, batch.rollout_ids, options_.batching.schedule(n, reducer_.world_size()));
  const auto owner = sample_owners(plans, batch.size());
  std::vector<int64_t> mine;
  for (int64_t i = 0; i < n; ++i)
    if (owner[i] == reducer_.rank()) mine.push_back(i);
  const int64_t max_tokens = options_.batching.micro_batch_tokens().value_or(1 << 30);
  std::vector<at::Tensor> out(batch.size());
  for (const auto& mb : first_fit(mine, lengths, max_tokens)) {
    std::vector<int64_t> totals, responses;
    for (auto s : mb) {
      totals.push_back(lengths[s]);
      responses.push_back(batch.response_lengths[s]);
    }
    auto values = response_values_of(pack_samples(batch, mb, trunk_.device()), totals, responses);
    int64_t start = 0;
    for (size_t i = 0; i < mb.size(); ++i) {
      out[mb[i]] = values.narrow(0, start, responses[i]);
      start += responses[i];
    }
  }
  reducer_.share_samples(out, owner, batch.response_lengths);
  return out;
}

std::vector<at::Tensor> Critic::returns_without_actor(const TrainBatch& batch,
                                                      const std::vector<at::Tensor>& values) const {
  TrainContext ctx(args_);
  ctx.options.advantages.kl_coef = 0;
  ctx.options.advantages.use_opd = false;
  auto data = RolloutTensors::from(batch, trunk_.device());
  data.values = values;
  compute_advantages_and_returns(ctx, data);
  return data.returns;
}

Metrics Critic::train(const TrainBatch& batch, const std::vector<at::Tensor>& old_values,
                      const std::vector<at::Tensor>& returns) {
  if (old_values.size() != batch.size() || returns.size() != batch.size()) {
    throw Error("critic: old values and returns are needed for every sample");
  }
  auto data = RolloutTensors::from(batch, trunk_.device());
  data.values = old_values;
  data.returns.clear();
  for (const auto& r : returns) data.returns.push_back(r.to(trunk_.device()));
  // The value loss averages each sample over its own tokens.
  data.rollout_mask_sums = data.mask_sums;
  const auto n = static_cast<int64_t>(batch.size());
  auto plans = plan_steps(data.total_lengths, batch.rollout_ids,
                          options_.batching.schedule(n, reducer_.world_size()));
  Metrics totals;
  for (const auto& plan : plans) {
    totals["critic/grad_norm"] = train_step(batch, data, plan, totals).grad_norm;
  }
  for (auto& [name, value] : totals) {
    if (name != "critic/grad_norm") value /= static_cast<double>(std::max<size_t>(plans.size(), 1));
  }
  return totals;
}

StepResult Critic::train_step(const TrainBatch& batch, const RolloutTensors& data,
                              const StepPlan& plan, Metrics& totals) {
  optimizer_->zero_grad();
  // Averaged over data x context parallel ranks (see Actor::train_step).
  const auto dp = static_cast<double>(reducer_.world_size()) *
                  static_cast<double>(trunk_.context_parallel().size);
  const double scale = dp / static_cast<double>(plan.samples.size());
  DeviceMetrics loss_metrics;
  for (const auto& mb : plan.per_rank[reducer_.rank()]) {
    auto lb = LossBatch::of(batch, data, mb, trunk_.device());
    auto values = response_values_of(lb.packed, lb.total_lengths, lb.response_lengths);
    auto out = value_loss_function(options_.value_clip, lb, values,
                                   sum_of_sample_mean(lb, options_.calculate_per_token_loss));
    (out.loss * scale).backward();
    optimizer_->accumulate_grads();
    loss_metrics.add(out.metrics, scale, dp);
  }
  auto result = optimizer_->step(lr_scheduler_->lr());
  lr_scheduler_->step();
  Metrics sums{{"value_loss", 0.0}, {"value_clipfrac", 0.0}};
  loss_metrics.add_to(sums);
  for (const auto& [name, value] : sums) totals["critic/" + name] += reducer_.all_reduce_sum(value);
  return result;
}

}  // namespace vime::train
