#include "vime/train/actor.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <optional>

#include "vime/core/crash_point.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/model/moe.hpp"
#include "vime/train/advantages.hpp"
#include "vime/train/context_parallel_rows.hpp"
#include "vime/train/device_metrics.hpp"
#include "vime/train/linear_log_probs.hpp"
#include "vime/train/log_probs.hpp"
#include "vime/train/loss.hpp"
#include "vime/train/loss_batch.hpp"
#include "vime/train/trainable_params.hpp"

namespace vime::train {
namespace {

// Log-probs (and, for training, entropy) of `rows` of `hidden` (or all rows in `rr` order) at the
// rollout temperature, without forming the whole logits unless tensor parallel (then from this
// rank's vocabulary columns).
TokenLogProbs scored_rows(Model& model, const at::Tensor& hidden, const at::Tensor& rows,
                          const at::Tensor& targets, const TrainOptions& options,
                          bool for_training) {
  const auto& tp = model.tensor_parallel();
  if (!tp.is_parallel()) {
    return linear_token_log_probs(hidden, model.output_weight(), rows, targets,
                                  options.rollout_temperature, options.log_probs_chunk_rows,
                                  for_training);
  }
  return vocab_parallel_token_log_probs(model.vocab_parallel_logits(hidden), rows, targets,
                                        options.rollout_temperature, model.config().vocab_size, tp,
                                        options.log_probs_chunk_rows);
}

// The whole logits [total_tokens, vocab] (a custom loss reads them), gathered over tensor ranks.
at::Tensor whole_logits(Model& model, const at::Tensor& hidden) { return model.logits(hidden); }

// Context parallel: this rank runs its shard of the micro-batch; the per-token outputs of every
// rank are gathered back into the whole micro-batch's order, so each rank of the group computes
// the loss of the whole micro-batch (every normalisation as on one rank) and backward gives each
// its own rows' gradients (summed over the group with the data-parallel reduction).
ForwardOutput forward_response_cp(Model& model, const PackedBatch& packed, const ResponseRows& rr,
                                  const TrainOptions& options, bool for_training,
                                  bool with_logits) {
  const auto& cp = model.context_parallel();
  ForwardOutput out;
  auto shard = shard_for_context_parallel(packed, cp);
  auto hidden = model.forward_hidden(shard);
  const auto rows = cp_response_rows(shard, rr);
  auto part = scored_rows(model, hidden, rows.rows, rows.targets, options, for_training);
  out.response.log_probs = gather_rows(part.log_probs, rows.dest, rows.num_whole, cp.group);
  if (part.entropy.defined())
    out.response.entropy = gather_rows(part.entropy, rows.dest, rows.num_whole, cp.group);
  if (with_logits) {
    const auto tokens = cp_token_rows(shard);
    out.logits = gather_rows(whole_logits(model, hidden.index_select(0, tokens.rows)), tokens.dest,
                             tokens.num_whole, cp.group);
  }
  return out;
}

// The forward over a packed micro-batch: the log-prob (and, for training, the entropy) of each
// response token at the rollout temperature (differentiable), from the hidden states without
// forming the logits; those only for a custom loss, which receives them.
ForwardOutput forward_response(Model& model, const PackedBatch& packed,
                               const std::vector<int64_t>& total_lengths,
                               const std::vector<int64_t>& response_lengths,
                               const TrainOptions& options, bool for_training,
                               bool with_logits = false) {
  auto rr = response_rows(packed.tokens, total_lengths, response_lengths);
  if (model.context_parallel().is_parallel())
    return forward_response_cp(model, packed, rr, options, for_training, with_logits);
  ForwardOutput out;
  auto hidden = model.forward_hidden(packed);
  out.response = scored_rows(model, hidden, rr.rows, rr.targets, options, for_training);
  if (with_logits) out.logits = whole_logits(model, hidden);
  return out;
}

// rollout/<name>: the masked mean of each sample, averaged over the samples that have one (read
// with the others when `metrics` goes to the host).
void add_masked_mean(DeviceMetrics& metrics, const char* name,
                     const std::vector<at::Tensor>& per_sample, const RolloutTensors& data) {
  if (per_sample.size() != data.size()) return;
  std::vector<at::Tensor> means;
  for (size_t i = 0; i < data.size(); ++i) {
    if (!per_sample[i].defined()) continue;  // a sample no step trained on
    means.push_back((per_sample[i].to(at::kFloat) * data.loss_masks[i]).sum() /
                    std::max(data.mask_sums[i], 1.0));
  }
  if (means.empty()) return;
  metrics.add(std::string("rollout/") + name, at::stack(means).mean());
}

// --moe-aux-loss-coeff (Megatron's list form: the first value).
double moe_aux_loss_coeff(const Args& args) {
  if (!args.has("moe_aux_loss_coeff")) return 0.0;
  const Json& value = args.get("moe_aux_loss_coeff");
  if (value.is_null()) return 0.0;
  if (value.is_array()) return value.size() == 0 ? 0.0 : value.at(0).as_double();
  return value.as_double();
}

}  // namespace

Actor::Actor(const Args& args, Model& model, Model* ref_model, RankReducer& reducer)
    : ctx_(args), model_(model), ref_model_(ref_model), reducer_(reducer) {
  ctx_.options.batching.flops_linear_coeff = 6.0 * static_cast<double>(model.config().hidden_size);
  ctx_.options.batching.context_parallel_size = model.context_parallel().size;
  if (model.config().is_moe() && moe_aux_loss_coeff(args) != 0 &&
      RecomputeOptions::from(args).enabled) {
    throw UsageError(
        "--moe-aux-loss-coeff with --recompute-granularity full is not supported yet: a recomputed "
        "layer's load-balancing loss has no gradient");
  }
  replay_options_ = RoutingReplayOptions::from(args);
  if (replay_options_.enabled) {
    const char* flag =
        replay_options_.from_rollout ? "--use-rollout-routing-replay" : "--use-routing-replay";
    if (!model.config().is_moe())
      throw UsageError(std::string(flag) + " needs a mixture-of-experts model");
    if (model.context_parallel().is_parallel()) {
      throw UsageError(std::string(flag) +
                       " with --context-parallel-size > 1 is not supported yet: the recorded "
                       "routing is per packed token, not per context-parallel shard");
    }
    routing_replay_ = std::make_unique<RoutingReplay>(model.config());
  }
  optimizer_ = std::make_unique<Optimizer>(trainable_parameters(model, args),
                                           OptimizerConfig::from(args), reducer.process_group(),
                                           TensorParallelNorm::of(model), ExpertGrads::of(model));
  lr_scheduler_ = std::make_unique<LrScheduler>(LrScheduler::from(args));
}

Actor::~Actor() = default;

std::unique_ptr<metrics::PhaseTimer::Scope> Actor::scoped_timer(const char* phase) {
  if (timer_ == nullptr) return nullptr;
  return std::make_unique<metrics::PhaseTimer::Scope>(*timer_, phase);
}

std::vector<at::Tensor> Actor::compute_log_probs(Model& model, const TrainBatch& batch) {
  std::vector<int64_t> all(batch.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return compute_log_probs(model, batch, all);
}

std::vector<at::Tensor> Actor::compute_log_probs(Model& model, const TrainBatch& batch,
                                                 const std::vector<int64_t>& samples) {
  at::NoGradGuard no_grad;
  const auto& batching = ctx_.options.batching;
  std::vector<int64_t> lengths;
  for (const auto& t : batch.tokens) lengths.push_back(static_cast<int64_t>(t.size()));
  const auto mbs = batching.log_probs_max_tokens_per_gpu.has_value()
                       ? first_fit(samples, lengths, *batching.log_probs_micro_batch_tokens())
                       : fixed_size(samples, batching.micro_batch_size);
  std::vector<at::Tensor> out(batch.size());
  // Expert parallel: every rank of the group runs as many forwards (each is a collective); a rank
  // with fewer micro-batches runs a one-token batch whose output it drops.
  if (const auto& ep = model.expert_parallel(); ep.is_parallel()) {
    std::vector<at::Tensor> count{
        at::full({1}, static_cast<int64_t>(mbs.size()),
                 at::TensorOptions().dtype(at::kLong).device(model.device()))};
    ep.group->all_reduce(count, dist::ReduceOp::kMax);
    for (int64_t extra = count[0].item<int64_t>() - static_cast<int64_t>(mbs.size()); extra > 0;
         --extra) {
      MoeRoutingScope unrecorded(nullptr);
      (void)model.forward_hidden(PackedBatch::pack({{0}}, model.device()));
    }
  }
  for (const auto& mb : mbs) {
    std::vector<int64_t> totals, responses;
    for (auto s : mb) {
      totals.push_back(lengths[s]);
      responses.push_back(batch.response_lengths[s]);
    }
    // The old-policy pass under routing replay records each token's experts, or replays the
    // rollout engine's.
    RoutingReplay* replay = &model == &model_ ? log_probs_routing_ : nullptr;
    MoeRouting routing;
    std::optional<MoeRoutingScope> routing_scope;
    if (replay != nullptr) {
      if (replay_options_.from_rollout) routing.replay = replay->replay_of(mb, model.device());
      routing_scope.emplace(&routing);
    }
    auto forward = forward_response(model, pack_samples(batch, mb, model.device()), totals,
                                    responses, ctx_.options, /*for_training=*/false);
    routing_scope.reset();
    if (replay != nullptr && !replay_options_.from_rollout) replay->record(mb, lengths, routing);
    int64_t start = 0;
    for (auto s : mb) {
      out[s] = forward.response.log_probs.narrow(0, start, batch.response_lengths[s]).detach();
      start += batch.response_lengths[s];
    }
  }
  return out;
}

Metrics Actor::train(int64_t rollout_id, const TrainBatch& batch) {
  const auto& options = ctx_.options;
  // 1. The rollout's per-sample data on the device, and the optimizer steps it makes.
  auto data = RolloutTensors::from(batch, model_.device());
  const auto n = static_cast<int64_t>(data.size());
  auto plans = plan_steps(data.total_lengths, batch.rollout_ids,
                          options.batching.schedule(n, reducer_.world_size()));
  if (plans.empty()) {
    throw Error("the rollout has " + std::to_string(n) +
                " samples, fewer than one step of --global-batch-size");
  }
  // 2. Reference and old log-probs (routing replay: the rollout's routing, or none yet).
  if (routing_replay_) {
    routing_replay_->reset(batch.size());
    if (replay_options_.from_rollout) routing_replay_->load_rollout(batch);
  }
  compute_ref_and_old_log_probs(batch, data, plans);
  // 3. Advantages and returns.
  if (options.loss_type != LossType::kSftLoss && options.compute_advantages_and_returns)
    compute_advantages_and_returns(ctx_, data);
  // 4. --rollout-data-postprocess-path.
  if (ctx_.plugins.rollout_data_postprocess) run_rollout_data_postprocess(rollout_id, data);
  returns_ = data.returns;
  log_rollout_data(data);
  // 5. The optimizer steps.
  return train_steps(rollout_id, batch, data, plans);
}

void Actor::compute_ref_and_old_log_probs(const TrainBatch& batch, RolloutTensors& data,
                                          const std::vector<StepPlan>& plans) {
  const auto& options = ctx_.options;
  const size_t num_steps = plans.size();
  const auto owner = sample_owners(plans, data.size());
  std::vector<int64_t> mine;
  for (size_t i = 0; i < owner.size(); ++i)
    if (owner[i] == reducer_.rank()) mine.push_back(static_cast<int64_t>(i));
  auto log_probs_of = [&](Model& model) {
    // LoRA: the reference is the actor's own base (its adapters off).
    const bool base_only = &model == ref_model_ && ref_model_ == &model_ && model_.has_lora();
    if (base_only) model_.set_lora_enabled(false);
    std::vector<at::Tensor> out;
    try {
      out = compute_log_probs(model, batch, mine);
    } catch (...) {
      if (base_only) model_.set_lora_enabled(true);
      throw;
    }
    if (base_only) model_.set_lora_enabled(true);
    reducer_.share_samples(out, owner, data.response_lengths);
    return out;
  };
  const auto& hook = ctx_.plugins.before_log_prob;
  const bool is_policy = options.loss_type != LossType::kSftLoss;
  const bool use_kl_loss = options.policy_loss.use_kl_loss;
  const double kl_coef = options.advantages.kl_coef;
  if (ref_model_ != nullptr && is_policy && (kl_coef != 0 || use_kl_loss || options.ci_test)) {
    auto timed = scoped_timer("ref_log_probs");
    if (hook) hook(ctx_.args, *ref_model_, "ref_");
    data.ref_log_probs = log_probs_of(*ref_model_);
  } else if (use_kl_loss && is_policy) {
    throw UsageError("--use-kl-loss needs a reference model (--ref-load)");
  }
  if (teacher_model_ != nullptr && is_policy && options.advantages.use_opd) {
    auto timed = scoped_timer("teacher_log_probs");
    if (hook) hook(ctx_.args, *teacher_model_, "teacher_");
    data.teacher_log_probs = log_probs_of(*teacher_model_);
  }
  if ((options.use_rollout_logprobs || options.policy_loss.use_tis) &&
      data.rollout_log_probs.empty()) {
    throw Error("--use-rollout-logprobs / --use-tis need rollout_log_probs in the train data");
  }
  if (!is_policy) return;
  // One step on fresh rollouts: the old policy is the current one, so its log-probs are the
  // training forward's own (detached); the extra pass is skipped unless something reads them.
  const auto estimator = options.advantages.estimator;
  // --use-routing-replay records the routing in that pass (slime's can_reuse_log_probs_in_loss).
  const bool records_routing = replay_options_.enabled && !replay_options_.from_rollout;
  const bool needs_old_forward =
      records_routing ||
      !(num_steps == 1 && kl_coef == 0 && estimator != AdvantageEstimator::kGspo &&
        estimator != AdvantageEstimator::kPpo && !options.get_mismatch_metrics &&
        !options.advantages.use_opd);
  const bool old_forward = needs_old_forward && (!options.use_rollout_logprobs || records_routing);
  if (old_forward) {
    auto timed = scoped_timer("log_probs");
    if (hook) hook(ctx_.args, model_, "");
    log_probs_routing_ = routing_replay_.get();
    try {
      data.log_probs = log_probs_of(model_);
    } catch (...) {
      log_probs_routing_ = nullptr;
      throw;
    }
    log_probs_routing_ = nullptr;
  }
  if (options.use_rollout_logprobs) data.log_probs = data.rollout_log_probs;
}

void Actor::run_rollout_data_postprocess(int64_t rollout_id, RolloutTensors& data) {
  RolloutData rd = data.to_rollout_data();
  ctx_.plugins.rollout_data_postprocess(ctx_.args, rollout_id, rd);
  // The hook may rewrite per-sample advantages or returns; other keys are read-only here.
  if (rd["advantages"].size() == data.advantages.size()) data.advantages = rd["advantages"];
  if (rd["returns"].size() == data.returns.size()) data.returns = rd["returns"];
}

void Actor::log_rollout_data(const RolloutTensors& data) {
  DeviceMetrics means;
  add_masked_mean(means, "log_probs", data.log_probs, data);
  add_masked_mean(means, "ref_log_probs", data.ref_log_probs, data);
  add_masked_mean(means, "rollout_log_probs", data.rollout_log_probs, data);
  add_masked_mean(means, "advantages", data.advantages, data);
  add_masked_mean(means, "returns", data.returns, data);
  add_masked_mean(means, "teacher_log_probs", data.teacher_log_probs, data);
  add_masked_mean(means, "opd_reverse_kl", data.opd_reverse_kl, data);
  rollout_data_metrics_.clear();
  means.add_to(rollout_data_metrics_);
}

Metrics Actor::train_steps(int64_t rollout_id, const TrainBatch& batch, const RolloutTensors& data,
                           const std::vector<StepPlan>& plans) {
  auto timed = scoped_timer("actor_train");
  // Without the old-policy pass, the first (only) step's forward gives the old log-probs.
  std::vector<at::Tensor> first_step_log_probs(
      data.log_probs.empty() && ctx_.options.loss_type == LossType::kPolicyLoss ? data.size() : 0);
  const auto num_steps = static_cast<int64_t>(plans.size());
  Metrics totals, last;
  step_metrics_.clear();
  if (step_callback_) step_callback_(0, num_steps);
  for (const auto& plan : plans) {
    Metrics this_step;
    auto [result, lr] = train_step(rollout_id, batch, data, plan, this_step, first_step_log_probs);
    for (const auto& [name, value] : this_step) totals[name] += value;
    last["train/grad_norm"] = this_step["train/grad_norm"] = result.grad_norm;
    last["train/lr"] = this_step["train/lr"] = lr;
    if (!result.is_updated) last["train/skipped_steps"] += 1;
    step_metrics_.push_back(std::move(this_step));
    if (step_callback_) step_callback_(static_cast<int64_t>(step_metrics_.size()), num_steps);
  }
  if (!first_step_log_probs.empty()) {
    reducer_.share_samples(first_step_log_probs, sample_owners(plans, data.size()),
                           data.response_lengths);
    DeviceMetrics mean;
    add_masked_mean(mean, "log_probs", first_step_log_probs, data);
    rollout_data_metrics_.erase("rollout/log_probs");
    mean.add_to(rollout_data_metrics_);
  }
  Metrics metrics;
  for (auto& [name, value] : totals) metrics[name] = value / static_cast<double>(num_steps);
  for (auto& [name, value] : last) metrics[name] = value;
  return metrics;
}

Actor::StepOutcome Actor::train_step(int64_t rollout_id, const TrainBatch& batch,
                                     const RolloutTensors& data, const StepPlan& plan,
                                     Metrics& metrics,
                                     std::vector<at::Tensor>& first_step_log_probs) {
  const auto& options = ctx_.options;
  if (ctx_.plugins.before_train_step) {
    ctx_.plugins.before_train_step(ctx_.args, rollout_id,
                                   static_cast<int64_t>(step_metrics_.size()), model_, *optimizer_,
                                   *lr_scheduler_);
  }
  optimizer_->zero_grad();
  double step_tokens = 0;
  for (auto s : plan.samples) step_tokens += data.mask_sums[s];
  // The optimizer averages the gradients over data x context parallel ranks; the ranks of a
  // context-parallel group hold parts of one gradient, so their sum is the data-parallel rank's.
  const auto dp = static_cast<double>(reducer_.world_size());
  const auto grad_ranks = dp * static_cast<double>(model_.context_parallel().size);
  const double scale = options.calculate_per_token_loss
                           ? grad_ranks / std::max(step_tokens, 1.0)
                           : grad_ranks / static_cast<double>(plan.samples.size());
  DeviceMetrics loss_metrics;
  const auto& micro_batches = plan.per_rank[reducer_.rank()];
  const bool is_moe = model_.config().is_moe();
  const double aux_coeff = is_moe ? moe_aux_loss_coeff(ctx_.args) : 0.0;
  for (const auto& mb : micro_batches) {
    auto lb = LossBatch::of(batch, data, mb, model_.device());
    MoeRouting routing;
    std::optional<MoeRoutingScope> routing_scope;
    if (routing_replay_) routing.replay = routing_replay_->replay_of(mb, model_.device());
    if (is_moe) routing_scope.emplace(&routing);
    auto forward = forward_response(model_, lb.packed, lb.total_lengths, lb.response_lengths,
                                    options, /*for_training=*/true,
                                    /*with_logits=*/static_cast<bool>(ctx_.plugins.custom_loss));
    routing_scope.reset();
    if (!first_step_log_probs.empty()) {
      auto parts = lb.split(forward.response.log_probs.detach());
      for (size_t k = 0; k < mb.size(); ++k) first_step_log_probs[mb[k]] = parts[k];
    }
    auto out =
        loss_function(ctx_, lb, forward, sum_of_sample_mean(lb, options.calculate_per_token_loss));
    auto total = out.loss * scale;
    if (!routing.aux_losses.empty()) {
      // Megatron's load-balancing loss: each MoE layer's, times --moe-aux-loss-coeff, its
      // gradient divided by the rank's micro-batches (MoEAuxLossAutoScaler) before the ranks'
      // mean; logged as the mean over the MoE layers (load_balancing_loss).
      const double per_micro_batch = 1.0 / static_cast<double>(micro_batches.size());
      auto aux = at::stack(routing.aux_losses);
      if (aux_coeff != 0) total = total + aux.sum() * (aux_coeff * per_micro_batch);
      loss_metrics.add("load_balancing_loss", aux.mean().detach(), per_micro_batch, dp);
    }
    total.backward();
    optimizer_->accumulate_grads();
    loss_metrics.add(out.metrics, scale, grad_ranks);
  }
  const double lr = lr_scheduler_->lr();
  crash_point("train_step");           // gradients accumulated, parameters not yet stepped
  auto result = optimizer_->step(lr);  // reduces the grads over the ranks itself
  lr_scheduler_->step();
  Metrics sums;
  loss_metrics.add_to(sums);
  // Every rank has the same metric names (the same loss options): one collective for all.
  std::vector<double> values;
  for (const auto& [name, value] : sums) values.push_back(value);
  values = reducer_.all_reduce_sums(std::move(values));
  size_t k = 0;
  for (const auto& [name, value] : sums) metrics["train/" + name] = values[k++];
  return {result, lr};
}

}  // namespace vime::train
