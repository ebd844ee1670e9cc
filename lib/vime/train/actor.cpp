#include "vime/train/actor.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <optional>

#include "vime/error.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/train/advantages.hpp"
#include "vime/train/dp_schedule.hpp"
#include "vime/train/log_probs.hpp"
#include "vime/train/loss.hpp"
#include "vime/train_hooks.hpp"

namespace vime::train {
namespace {

// Per-sample tensors of one rollout, all [response_length] fp32 on the model's device.
struct SampleData {
  std::vector<at::Tensor> loss_masks, old_log_probs, ref_log_probs, rollout_log_probs, advantages,
      returns;
  std::vector<int64_t> total_lengths;
  std::vector<double> rollout_mask_sums;
};

at::Tensor to_tensor(const std::vector<float>& v, const at::Device& device) {
  return at::tensor(v, at::TensorOptions().dtype(at::kFloat)).to(device);
}

std::vector<at::Tensor> pick(const std::vector<at::Tensor>& all, const MicroBatch& mb) {
  std::vector<at::Tensor> out;
  if (all.empty()) return out;
  for (auto s : mb) out.push_back(all[s]);
  return out;
}

at::Tensor cat_or_empty(const std::vector<at::Tensor>& parts) {
  return parts.empty() ? at::Tensor() : at::cat(parts);
}

}  // namespace

struct Actor::Impl {
  const Args& args;
  Model* ref_model;
  GradReducer& reducer;
  std::string estimator, loss_type;
  double temperature;
  int64_t chunk_rows;
  plugin::PluginFunction<PluginKind::kLoss> custom_loss;
  plugin::PluginFunction<PluginKind::kAdvantage> custom_advantage;
  plugin::PluginFunction<PluginKind::kTis> custom_tis;
  plugin::PluginFunction<PluginKind::kPgLossReducer> custom_reducer;
  plugin::PluginFunction<PluginKind::kRolloutDataPostprocess> rollout_data_postprocess;
  plugin::PluginFunction<PluginKind::kBeforeLogProbHook> before_log_prob;
  plugin::PluginFunction<PluginKind::kBeforeTrainStepHook> before_train_step;

  Impl(const Args& a, Model* ref, GradReducer& r) : args(a), ref_model(ref), reducer(r) {
    estimator = args.get_string("advantage_estimator");
    loss_type = args.get_string("loss_type");
    temperature = args.get_double("rollout_temperature");
    const int64_t chunk = args.get_int("log_probs_chunk_size");
    chunk_rows = chunk > 0 ? chunk : 1024;
    custom_loss = plugin::load_hook_if_set<PluginKind::kLoss>(args, "custom_loss_function_path");
    custom_advantage =
        plugin::load_hook_if_set<PluginKind::kAdvantage>(args, "custom_advantage_function_path");
    custom_tis = plugin::load_hook_if_set<PluginKind::kTis>(args, "custom_tis_function_path");
    custom_reducer = plugin::load_hook_if_set<PluginKind::kPgLossReducer>(
        args, "custom_pg_loss_reducer_function_path");
    rollout_data_postprocess = plugin::load_hook_if_set<PluginKind::kRolloutDataPostprocess>(
        args, "rollout_data_postprocess_path");
    before_log_prob = plugin::load_hook_if_set<PluginKind::kBeforeLogProbHook>(
        args, "custom_megatron_before_log_prob_hook_path");
    before_train_step = plugin::load_hook_if_set<PluginKind::kBeforeTrainStepHook>(
        args, "custom_megatron_before_train_step_hook_path");
    if (loss_type == "custom_loss" && !custom_loss) {
      throw UsageError("--loss-type custom_loss needs --custom-loss-function-path");
    }
    if (loss_type != "policy_loss" && loss_type != "sft_loss" && loss_type != "custom_loss") {
      throw UsageError("--loss-type " + loss_type +
                       ": expected policy_loss, sft_loss or custom_loss");
    }
  }

  DpScheduleConfig schedule_config(int64_t num_samples) const {
    DpScheduleConfig c;
    c.dp_size = reducer.world_size();
    c.global_batch_size = args.get_optional_int("global_batch_size").value_or(num_samples);
    if (args.get_bool("use_dynamic_batch_size") && args.is_set("max_tokens_per_gpu")) {
      c.max_tokens_per_gpu = args.get_int("max_tokens_per_gpu");
    }
    c.micro_batch_size = args.get_int("micro_batch_size");
    return c;
  }

  PackedBatch pack(const TrainBatch& batch, const MicroBatch& mb, const at::Device& device) const {
    std::vector<std::vector<int64_t>> sequences;
    for (auto s : mb) sequences.push_back(batch.tokens[s]);
    return PackedBatch::pack(sequences, device);
  }

  // Log-probs and entropy of the response tokens of micro-batch `mb` (differentiable).
  std::pair<TokenLogProbs, at::Tensor> forward(Model& model, const TrainBatch& batch,
                                               const MicroBatch& mb, const SampleData& data) const {
    auto packed = pack(batch, mb, model.device());
    auto logits = model.forward(packed);
    std::vector<int64_t> totals, responses;
    for (auto s : mb) {
      totals.push_back(data.total_lengths[s]);
      responses.push_back(batch.response_lengths[s]);
    }
    auto rr = response_rows(packed.tokens, totals, responses);
    return {token_log_probs(logits, rr.rows, rr.targets, temperature, chunk_rows), logits};
  }

  SumOfSampleMean reducer_of(const TrainBatch& batch, const MicroBatch& mb,
                             const SampleData& data) const {
    std::vector<int64_t> responses, totals;
    std::vector<double> mask_sums;
    for (auto s : mb) {
      responses.push_back(batch.response_lengths[s]);
      totals.push_back(data.total_lengths[s]);
      mask_sums.push_back(data.rollout_mask_sums[s]);
    }
    const bool per_token = args.get_bool("calculate_per_token_loss");
    return sum_of_sample_mean(responses, pick(data.loss_masks, mb), mask_sums, per_token);
  }
};

Actor::Actor(const Args& args, Model& model, Model* ref_model, GradReducer& reducer)
    : impl_(std::make_unique<Impl>(args, ref_model, reducer)), model_(model) {
  optimizer_ =
      std::make_unique<Optimizer>(model.named_parameters(), OptimizerConfig::from_args(args),
                                  OptimizerShard{reducer.rank(), reducer.world_size()});
  lr_scheduler_ = std::make_unique<LrScheduler>(LrScheduler::from_args(args));
}

Actor::~Actor() = default;

std::unique_ptr<metrics::PhaseTimer::Scope> Actor::scoped_timer(const char* phase) {
  if (timer_ == nullptr) return nullptr;
  return std::make_unique<metrics::PhaseTimer::Scope>(*timer_, phase);
}

std::vector<at::Tensor> Actor::compute_log_probs(Model& model, const TrainBatch& batch) {
  at::NoGradGuard no_grad;
  SampleData data;
  std::vector<int64_t> lengths;
  for (const auto& t : batch.tokens) {
    data.total_lengths.push_back(static_cast<int64_t>(t.size()));
    lengths.push_back(static_cast<int64_t>(t.size()));
  }
  std::vector<MicroBatch> mbs;
  std::vector<int64_t> all(batch.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  const auto& args = impl_->args;
  if (args.is_set("max_tokens_per_gpu")) {
    mbs = first_fit(all, lengths, args.get_int("max_tokens_per_gpu"));
  } else {
    const auto mbs_size =
        static_cast<size_t>(std::max<int64_t>(args.get_int("micro_batch_size"), 1));
    for (size_t i = 0; i < all.size(); i += mbs_size) {
      mbs.emplace_back(
          all.begin() + static_cast<std::ptrdiff_t>(i),
          all.begin() + static_cast<std::ptrdiff_t>(std::min(i + mbs_size, all.size())));
    }
  }
  std::vector<at::Tensor> out(batch.size());
  for (const auto& mb : mbs) {
    auto [lp, logits] = impl_->forward(model, batch, mb, data);
    int64_t start = 0;
    for (auto s : mb) {
      out[s] = lp.log_probs.narrow(0, start, batch.response_lengths[s]).detach();
      start += batch.response_lengths[s];
    }
  }
  return out;
}

Metrics Actor::train(int64_t rollout_id, const TrainBatch& batch) {
  auto& I = *impl_;
  const auto& args = I.args;
  const auto device = model_.device();
  const size_t n = batch.size();
  if (batch.response_lengths.size() != n || (!batch.rewards.empty() && batch.rewards.size() != n)) {
    throw Error("train data: tokens, response_lengths and rewards need one entry per sample");
  }
  // --- 1. Per-sample masks and lengths.
  SampleData data;
  std::vector<int64_t> lengths;
  std::map<int64_t, double> mask_sum_by_rollout;
  std::vector<double> sample_mask_sums;
  for (size_t i = 0; i < n; ++i) {
    const auto total = static_cast<int64_t>(batch.tokens[i].size());
    const int64_t response = batch.response_lengths[i];
    if (response <= 0 || response >= total) {
      throw Error("train data: sample " + std::to_string(i) + " has response_length " +
                  std::to_string(response) + " of " + std::to_string(total) + " tokens");
    }
    data.total_lengths.push_back(total);
    lengths.push_back(total);
    at::Tensor mask;
    if (i < batch.loss_masks.size() && !batch.loss_masks[i].empty()) {
      if (static_cast<int64_t>(batch.loss_masks[i].size()) != response) {
        throw Error("train data: sample " + std::to_string(i) + " has a loss_mask of " +
                    std::to_string(batch.loss_masks[i].size()) + " entries for response_length " +
                    std::to_string(response));
      }
      mask = to_tensor(batch.loss_masks[i], device);
    } else {
      mask = at::ones({response}, at::TensorOptions().dtype(at::kFloat).device(device));
    }
    data.loss_masks.push_back(mask);
    const int64_t rid = batch.rollout_ids.empty() ? static_cast<int64_t>(i) : batch.rollout_ids[i];
    sample_mask_sums.push_back(mask.sum().item<double>());
    mask_sum_by_rollout[rid] += sample_mask_sums.back();
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t rid = batch.rollout_ids.empty() ? static_cast<int64_t>(i) : batch.rollout_ids[i];
    data.rollout_mask_sums.push_back(mask_sum_by_rollout[rid]);
  }
  if (!batch.rollout_log_probs.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<int64_t>(batch.rollout_log_probs[i].size()) != batch.response_lengths[i]) {
        throw Error("train data: sample " + std::to_string(i) +
                    " has rollout_log_probs of the wrong length");
      }
      data.rollout_log_probs.push_back(to_tensor(batch.rollout_log_probs[i], device));
    }
  }
  auto plans = plan_steps(lengths, batch.rollout_ids, I.schedule_config(static_cast<int64_t>(n)));
  if (plans.empty()) {
    throw Error("the rollout has " + std::to_string(n) +
                " samples, fewer than one step of --global-batch-size");
  }

  // --- 2. Reference and old log-probs.
  const double kl_coef = args.get_double("kl_coef");
  const bool use_kl_loss = args.get_bool("use_kl_loss");
  const bool is_policy = I.loss_type != "sft_loss";
  const bool ci_test = args.get_bool("ci_test");
  if (I.ref_model != nullptr && is_policy && (kl_coef != 0 || use_kl_loss || ci_test)) {
    auto timed = scoped_timer("ref_log_probs");
    if (I.before_log_prob) I.before_log_prob(args, *I.ref_model, "ref_");
    data.ref_log_probs = compute_log_probs(*I.ref_model, batch);
  } else if (use_kl_loss && is_policy) {
    throw UsageError("--use-kl-loss needs a reference model (--ref-load)");
  }
  const bool use_rollout_logprobs = args.get_bool("use_rollout_logprobs");
  if ((use_rollout_logprobs || args.get_bool("use_tis")) && data.rollout_log_probs.empty()) {
    throw Error("--use-rollout-logprobs / --use-tis need rollout_log_probs in the train data");
  }
  // One step on fresh rollouts: the old policy is the current one, so its log-probs are the
  // training forward's own (detached); the extra pass is skipped unless something reads them.
  const bool needs_old_forward = !(plans.size() == 1 && kl_coef == 0 && I.estimator != "gspo" &&
                                   I.estimator != "ppo" && !args.get_bool("get_mismatch_metrics"));
  if (is_policy) {
    if (use_rollout_logprobs) {
      data.old_log_probs = data.rollout_log_probs;
    } else if (needs_old_forward) {
      auto timed = scoped_timer("log_probs");
      if (I.before_log_prob) I.before_log_prob(args, model_, "");
      data.old_log_probs = compute_log_probs(model_, batch);
    }
  }

  // --- 3. Advantages and returns.
  if (is_policy) {
    const KlType kl_type = parse_kl_type(args.get_string("kl_loss_type"));
    const bool kl_in_reward = kl_coef != 0 && !data.ref_log_probs.empty() &&
                              (I.estimator == "ppo" || I.estimator == "reinforce_plus_plus" ||
                               I.estimator == "reinforce_plus_plus_baseline");
    auto kl_of = [&](size_t i) {
      return kl_in_reward ? approx_kl(data.old_log_probs.empty() ? data.ref_log_probs[i]
                                                                 : data.old_log_probs[i],
                                      data.ref_log_probs[i], kl_type)
                          : at::zeros({batch.response_lengths[i]},
                                      at::TensorOptions().dtype(at::kFloat).device(device));
    };
    if (I.custom_advantage) {
      RolloutData rd;
      for (size_t i = 0; i < n; ++i) {
        rd["loss_masks"].push_back(data.loss_masks[i]);
        rd["rewards"].push_back(at::scalar_tensor(batch.rewards.at(i)));
        rd["response_lengths"].push_back(at::scalar_tensor(batch.response_lengths[i], at::kLong));
        if (!data.old_log_probs.empty()) rd["log_probs"].push_back(data.old_log_probs[i]);
        if (!data.ref_log_probs.empty()) rd["ref_log_probs"].push_back(data.ref_log_probs[i]);
      }
      I.custom_advantage(args, rd);
      if (rd["advantages"].size() != n) {
        throw Error(I.custom_advantage.description() + " must set one \"advantages\" per sample");
      }
      data.advantages = rd["advantages"];
      data.returns = rd.count("returns") ? rd["returns"] : rd["advantages"];
    } else {
      std::vector<double> rewards = batch.rewards;
      const bool normalize =
          !batch.rewards_post_processed && args.get_bool("rewards_normalization") &&
          (I.estimator == "grpo" || I.estimator == "gspo" || I.estimator == "cispo" ||
           I.estimator == "reinforce_plus_plus_baseline");
      if (normalize) {
        const bool by_std = I.estimator != "reinforce_plus_plus_baseline" &&
                            args.get_bool("grpo_std_normalization");
        rewards = normalize_group_rewards(rewards, args.get_int("n_samples_per_prompt"), by_std);
      }
      for (size_t i = 0; i < n; ++i) {
        const int64_t len = batch.response_lengths[i];
        AdvantagesAndReturns ar;
        if (I.estimator == "grpo" || I.estimator == "gspo" || I.estimator == "cispo") {
          auto a =
              at::full({len}, rewards[i], at::TensorOptions().dtype(at::kFloat).device(device));
          ar = {a, a};
        } else if (I.estimator == "reinforce_plus_plus") {
          ar = reinforce_plus_plus(kl_of(i), data.loss_masks[i], rewards[i], kl_coef,
                                   args.get_double("gamma"));
        } else if (I.estimator == "reinforce_plus_plus_baseline") {
          ar = reinforce_plus_plus_baseline(kl_of(i), rewards[i], kl_coef);
        } else if (I.estimator == "ppo") {
          if (batch.values.size() != n) {
            throw Error("--advantage-estimator ppo needs critic values in the train data");
          }
          ar = ppo_advantages(kl_of(i), to_tensor(batch.values[i], device), rewards[i], kl_coef,
                              args.get_double("gamma"), args.get_double("lambd"));
        } else {
          throw UsageError("--advantage-estimator " + I.estimator + " is not supported");
        }
        data.advantages.push_back(ar.advantages.to(at::kFloat));
        data.returns.push_back(ar.returns.to(at::kFloat));
      }
    }
    if (args.get_bool("normalize_advantages")) {
      data.advantages = whiten_advantages(data.advantages, data.loss_masks);
    }
  }
  if (I.rollout_data_postprocess) {
    RolloutData rd;
    rd["loss_masks"] = data.loss_masks;
    rd["advantages"] = data.advantages;
    rd["returns"] = data.returns;
    rd["log_probs"] = data.old_log_probs;
    rd["ref_log_probs"] = data.ref_log_probs;
    rd["rollout_log_probs"] = data.rollout_log_probs;
    for (size_t i = 0; i < n; ++i) {
      rd["rewards"].push_back(at::scalar_tensor(batch.rewards.at(i)));
      rd["response_lengths"].push_back(at::scalar_tensor(batch.response_lengths[i], at::kLong));
    }
    I.rollout_data_postprocess(args, rollout_id, rd);
    // The hook may rewrite per-sample advantages or returns; other keys are read-only here.
    if (rd["advantages"].size() == data.advantages.size()) data.advantages = rd["advantages"];
    if (rd["returns"].size() == data.returns.size()) data.returns = rd["returns"];
  }
  returns_ = data.returns;
  rollout_data_metrics_.clear();
  // Masked per-sample means, averaged over the samples: one host sync per metric.
  auto log_mean = [&](const char* name, const std::vector<at::Tensor>& per_sample) {
    if (per_sample.size() != n) return;
    std::vector<at::Tensor> means;
    for (size_t i = 0; i < n; ++i) {
      if (!per_sample[i].defined()) continue;  // a sample no step trained on
      means.push_back((per_sample[i].to(at::kFloat) * data.loss_masks[i]).sum() /
                      std::max(sample_mask_sums[i], 1.0));
    }
    if (means.empty()) return;
    rollout_data_metrics_[std::string("rollout/") + name] = at::stack(means).mean().item<double>();
  };
  // Without the extra pass, the first (only) step's forward gives the old policy's log-probs.
  std::vector<at::Tensor> first_step_log_probs(data.old_log_probs.empty() && is_policy ? n : 0);
  if (!data.old_log_probs.empty()) log_mean("log_probs", data.old_log_probs);
  log_mean("ref_log_probs", data.ref_log_probs);
  log_mean("rollout_log_probs", data.rollout_log_probs);
  log_mean("advantages", data.advantages);
  log_mean("returns", data.returns);
  auto timed_train = scoped_timer("actor_train");

  // --- 4. The optimizer steps of this rollout.
  const double eps_clip = args.get_double("eps_clip");
  const double eps_clip_high = args.get_optional_double("eps_clip_high").value_or(eps_clip);
  const auto eps_clip_c = args.get_optional_double("eps_clip_c");
  const double entropy_coef = args.get_double("entropy_coef");
  const bool per_token = args.get_bool("calculate_per_token_loss");
  const auto dp = static_cast<double>(I.reducer.world_size());
  Metrics totals;
  Metrics last;
  step_metrics_.clear();
  if (step_callback_) step_callback_(0, static_cast<int64_t>(plans.size()));
  for (const auto& plan : plans) {
    if (I.before_train_step) {
      I.before_train_step(args, rollout_id, static_cast<int64_t>(step_metrics_.size()), model_,
                          *optimizer_, *lr_scheduler_);
    }
    optimizer_->zero_grad();
    double step_tokens = 0;
    for (auto s : plan.samples) step_tokens += data.loss_masks[s].sum().item<double>();
    const double scale =
        per_token ? dp / std::max(step_tokens, 1.0) : dp / static_cast<double>(plan.samples.size());
    Metrics step_metrics;
    for (const auto& mb : plan.per_rank[I.reducer.rank()]) {
      auto [out, logits] = I.forward(model_, batch, mb, data);
      auto ssm = I.reducer_of(batch, mb, data);
      const auto& lp = out.log_probs;
      std::map<std::string, at::Tensor> metric_values;
      at::Tensor loss;
      if (I.loss_type == "sft_loss") {
        loss = -ssm(lp);
        metric_values["loss"] = loss;
      } else if (I.loss_type == "custom_loss") {
        RolloutData rd;
        rd["loss_masks"] = pick(data.loss_masks, mb);
        rd["advantages"] = pick(data.advantages, mb);
        rd["returns"] = pick(data.returns, mb);
        rd["log_probs"] = pick(data.old_log_probs, mb);
        rd["ref_log_probs"] = pick(data.ref_log_probs, mb);
        rd["rollout_log_probs"] = pick(data.rollout_log_probs, mb);
        for (auto s : mb) {
          rd["tokens"].push_back(at::tensor(batch.tokens[s], at::kLong));
          rd["response_lengths"].push_back(at::scalar_tensor(batch.response_lengths[s], at::kLong));
        }
        auto custom = I.custom_loss(args, rd, logits, ssm);
        loss = custom.loss;
        metric_values = custom.metrics;
        metric_values["loss"] = loss;
      } else {
        auto old =
            data.old_log_probs.empty() ? lp.detach() : cat_or_empty(pick(data.old_log_probs, mb));
        auto adv = cat_or_empty(pick(data.advantages, mb));
        if (!first_step_log_probs.empty()) {
          int64_t start = 0;
          for (auto s : mb) {
            first_step_log_probs[s] = lp.detach().narrow(0, start, batch.response_lengths[s]);
            start += batch.response_lengths[s];
          }
        }
        auto ppo_kl = old - lp;
        auto masks = pick(data.loss_masks, mb);
        auto kl_for_clip = I.estimator == "gspo" ? sequence_mean_kl(ppo_kl, masks) : ppo_kl;
        PerTokenLoss pg =
            I.estimator == "cispo"
                ? cispo_loss(kl_for_clip, lp, adv, eps_clip, eps_clip_high)
                : ppo_policy_loss(kl_for_clip, adv, eps_clip, eps_clip_high, eps_clip_c);
        auto pg_loss = pg.loss;
        if (args.get_bool("use_opsm")) {
          pg_loss = pg_loss * opsm_mask(adv, sequence_mean_kl(ppo_kl.detach(), masks),
                                        args.get_double("opsm_delta"));
        }
        if (args.get_bool("use_tis")) {
          TisInputs tis_in;
          tis_in.pg_loss = pg_loss;
          std::vector<at::Tensor> old_parts;
          int64_t start = 0;
          for (auto s : mb) {
            old_parts.push_back(old.narrow(0, start, batch.response_lengths[s]).detach());
            start += batch.response_lengths[s];
            tis_in.total_lengths.push_back(data.total_lengths[s]);
            tis_in.response_lengths.push_back(batch.response_lengths[s]);
          }
          tis_in.train_log_probs = old_parts;
          tis_in.rollout_log_probs = pick(data.rollout_log_probs, mb);
          tis_in.loss_masks = masks;
          auto tis = I.custom_tis ? I.custom_tis(args, tis_in)
                                  : vanilla_tis(tis_in, args.get_double("tis_clip_low"),
                                                args.get_double("tis_clip"));
          pg_loss = tis.pg_loss;
          for (auto& [name, parts] : tis.metrics) metric_values[name] = ssm(at::cat(parts));
        }
        SumOfSampleMean pg_reducer = ssm;
        if (I.custom_reducer) {
          std::vector<int64_t> totals_mb, responses_mb;
          for (auto s : mb) {
            totals_mb.push_back(data.total_lengths[s]);
            responses_mb.push_back(batch.response_lengths[s]);
          }
          pg_reducer = I.custom_reducer(totals_mb, responses_mb, masks, per_token);
        }
        auto pg_value = pg_reducer(pg_loss);
        auto entropy_value = ssm(out.entropy);
        loss = pg_value - entropy_coef * entropy_value;
        metric_values["pg_loss"] = pg_value;
        metric_values["entropy_loss"] = entropy_value;
        metric_values["pg_clipfrac"] = ssm(pg.clipfrac);
        metric_values["ppo_kl"] = ssm(ppo_kl);
        if (!data.rollout_log_probs.empty()) {
          metric_values["train_rollout_logprob_abs_diff"] =
              ssm((lp.detach() - cat_or_empty(pick(data.rollout_log_probs, mb))).abs());
        }
        if (use_kl_loss) {
          auto kl = approx_kl(lp, cat_or_empty(pick(data.ref_log_probs, mb)),
                              parse_kl_type(args.get_string("kl_loss_type")));
          if (args.get_bool("use_unbiased_kl")) kl = kl * (lp - old).exp();
          auto kl_value = ssm(kl);
          loss = loss + args.get_double("kl_loss_coef") * kl_value;
          metric_values["kl_loss"] = kl_value;
        }
        metric_values["loss"] = loss;
      }
      (loss * scale).backward();
      optimizer_->accumulate_grads();
      for (const auto& [name, value] : metric_values) {
        step_metrics[name] += value.detach().item<double>() * scale / dp;
      }
    }
    auto grads = optimizer_->main_grads();
    I.reducer.all_reduce_mean(grads);
    const double lr = lr_scheduler_->lr();
    auto result = optimizer_->step(lr);
    lr_scheduler_->step();
    Metrics this_step;
    for (auto& [name, value] : step_metrics) {
      this_step["train/" + name] = I.reducer.all_reduce_sum(value);
      totals["train/" + name] += this_step["train/" + name];
    }
    last["train/grad_norm"] = this_step["train/grad_norm"] = result.grad_norm;
    last["train/lr"] = this_step["train/lr"] = lr;
    if (!result.is_updated) last["train/skipped_steps"] += 1;
    step_metrics_.push_back(std::move(this_step));
    if (step_callback_) {
      step_callback_(static_cast<int64_t>(step_metrics_.size()),
                     static_cast<int64_t>(plans.size()));
    }
  }
  if (!first_step_log_probs.empty() && I.reducer.world_size() == 1) {
    log_mean("log_probs", first_step_log_probs);
  }
  Metrics metrics;
  for (auto& [name, value] : totals) metrics[name] = value / static_cast<double>(plans.size());
  for (auto& [name, value] : last) metrics[name] = value;
  return metrics;
}

}  // namespace vime::train
