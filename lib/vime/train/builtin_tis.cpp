#include "vime/train/builtin_tis.hpp"

#include <ATen/ATen.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "vime/error.hpp"
#include "vime/train/loss.hpp"

namespace vime::train {
namespace {

constexpr std::string_view kIcepopNames[] = {"icepop",
                                             "slime.backends.megatron_utils.loss.icepop_function",
                                             "vime.backends.megatron_utils.loss.icepop_function"};
constexpr std::string_view kMisNames[] = {
    "mis", "examples.train_infer_mismatch_helper.mis.compute_mis_weights_with_cp"};

template <size_t N>
bool is_one_of(std::string_view spec, const std::string_view (&names)[N]) {
  for (auto name : names)
    if (spec == name) return true;
  return false;
}

// --- The MIS example's settings (--custom-config-path keys).

const char* kConfigFlag = "--custom-config-path";

std::optional<double> number_key(const Args& args, const char* key) {
  if (!args.has(key) || args.get(key).is_null()) return std::nullopt;
  const Json& v = args.get(key);
  if (!v.is_number()) throw UsageError(std::string(kConfigFlag) + ": " + key + " must be a number");
  return v.as_double();
}

bool bool_key(const Args& args, const char* key) {
  if (!args.has(key) || args.get(key).is_null()) return false;
  const Json& v = args.get(key);
  if (!v.is_bool())
    throw UsageError(std::string(kConfigFlag) + ": " + key + " must be true or false");
  return v.as_bool();
}

std::string choice_key(const Args& args, const char* key,
                       std::initializer_list<const char*> choices) {
  if (!args.has(key) || !args.get(key).is_string()) {
    throw UsageError(std::string(kConfigFlag) + " needs " + key +
                     " for the mis TIS function (as in slime's mis.yaml)");
  }
  const std::string value = args.get(key).as_string();
  std::string all;
  for (const char* c : choices) {
    if (value == c) return value;
    all += (all.empty() ? "" : ", ") + std::string(c);
  }
  throw UsageError(std::string(kConfigFlag) + ": " + key + " " + value + ": expected " + all);
}

struct MisConfig {
  bool use_tis = false;  // --use-tis; without it, only the mismatch metrics
  std::string tis_mode, tis_level;
  double tis_lower = 0, tis_upper = 0;
  bool tis_batch_normalize = false;
  bool use_rs = false;
  std::string rs_level;
  double rs_lower = 0, rs_upper = 0;
  std::optional<double> rs_veto_threshold;

  static MisConfig from(const Args& args) {
    MisConfig c;
    c.use_tis = args.get_bool("use_tis");
    if (!c.use_tis) return c;
    c.tis_mode = choice_key(args, "tis_mode", {"truncate", "clip", "mask"});
    c.tis_level = choice_key(args, "tis_level", {"token", "sequence", "geometric"});
    const auto upper = number_key(args, "tis_upper_bound");
    if (!upper) throw UsageError(std::string(kConfigFlag) + " needs tis_upper_bound for mis");
    c.tis_upper = *upper;
    c.tis_lower = number_key(args, "tis_lower_bound").value_or(1.0 / c.tis_upper);
    c.tis_batch_normalize = bool_key(args, "tis_batch_normalize");
    c.use_rs = bool_key(args, "use_rs");
    if (c.use_rs) c.rs_level = choice_key(args, "rs_level", {"token", "sequence", "geometric"});
    c.rs_lower = number_key(args, "rs_lower_bound").value_or(c.tis_lower);
    c.rs_upper = number_key(args, "rs_upper_bound").value_or(c.tis_upper);
    c.rs_veto_threshold = number_key(args, "rs_veto_threshold");
    if (c.tis_batch_normalize && c.tis_level == "geometric") {
      throw UsageError(std::string(kConfigFlag) +
                       ": tis_batch_normalize supports tis_level token or sequence");
    }
    return c;
  }
};

constexpr double kSafetyBound = 20.0;  // keeps exp() finite, as the example does

using TensorMetrics = std::map<std::string, std::vector<at::Tensor>>;

at::Tensor masked_sum(const at::Tensor& x, const at::Tensor& m) { return (x * m).sum(); }
at::Tensor masked_mean(const at::Tensor& x, const at::Tensor& m) {
  return masked_sum(x, m) / m.sum().clamp_min(1);
}
at::Tensor expand(const at::Tensor& scalar, const at::Tensor& like) {
  return scalar.expand_as(like).clone();
}
at::Tensor masked_extreme(const at::Tensor& x, const at::Tensor& m, bool is_min) {
  auto valid = m.to(at::kBool);
  if (!valid.any().item<bool>()) return at::zeros({}, x.options());
  auto selected = x.masked_select(valid);
  return is_min ? selected.min() : selected.max();
}

void append(TensorMetrics& metrics, const std::string& key, const at::Tensor& value) {
  metrics[key].push_back(value.detach().to(at::kFloat));
}

at::Tensor log_ratio_at(const at::Tensor& raw, const at::Tensor& m, const std::string& level) {
  if (level == "token") return raw;
  if (level == "sequence") return expand(masked_sum(raw, m), raw);
  return expand(masked_mean(raw, m), raw);  // geometric
}

void add_ppl_metrics(const at::Tensor& train, const at::Tensor& rollout, const at::Tensor& m,
                     TensorMetrics& metrics) {
  auto mean_train = expand(masked_mean(train, m), train);
  auto mean_rollout = expand(masked_mean(rollout, m), train);
  append(metrics, "training_log_ppl", -mean_train);
  append(metrics, "training_ppl", (-mean_train).exp());
  append(metrics, "rollout_log_ppl", -mean_rollout);
  append(metrics, "rollout_ppl", (-mean_rollout).exp());
  append(metrics, "kl", rollout - train);
  auto log_ratio = train - rollout;
  append(metrics, "k3_kl", log_ratio.exp() - log_ratio - 1);
  auto log_ppl_diff = mean_rollout - mean_train;
  append(metrics, "log_ppl_diff", log_ppl_diff);
  append(metrics, "log_ppl_abs_diff", log_ppl_diff.abs());
  append(metrics, "ppl_ratio", log_ppl_diff.exp());
  auto rho = log_ratio.clamp(-kSafetyBound, kSafetyBound).exp();
  append(metrics, "chi2_token", expand(masked_mean(rho.square(), m) - 1.0, train));
  auto seq = masked_sum(log_ratio, m).clamp(-kSafetyBound, kSafetyBound);
  append(metrics, "chi2_seq", expand((2.0 * seq).exp() - 1.0, train));
}

// The example's mask(): records the fractions out of [lower, upper]; returns the narrowed mask.
at::Tensor reject_outside(const at::Tensor& weights, const at::Tensor& mask, double lower,
                          double upper, const std::string& prefix, TensorMetrics& metrics) {
  append(metrics, prefix + "mask_fraction_low", weights < lower);
  append(metrics, prefix + "mask_fraction_high", weights > upper);
  return mask * at::logical_and(weights >= lower, weights <= upper).to(at::kFloat);
}

}  // namespace

bool is_builtin_tis_name(std::string_view spec) {
  return is_one_of(spec, kIcepopNames) || is_one_of(spec, kMisNames);
}

std::optional<plugin::PluginFunction<PluginKind::kTis>> builtin_tis_function(const Args& args) {
  if (!args.has("custom_tis_function_path") || !args.is_set("custom_tis_function_path"))
    return std::nullopt;
  const std::string spec = args.get_string("custom_tis_function_path");
  if (is_one_of(spec, kIcepopNames))
    return plugin::PluginFunction<PluginKind::kTis>(nullptr, &icepop_function, "built-in icepop");
  if (is_one_of(spec, kMisNames)) {
    MisConfig::from(args);  // a bad setting fails now, not at the first train step
    return plugin::PluginFunction<PluginKind::kTis>(nullptr, &mis_function, "built-in mis");
  }
  return std::nullopt;
}

TisOutput icepop_function(const Args& args, const TisInputs& in) {
  return icepop_tis(in, args.get_double("tis_clip_low"), args.get_double("tis_clip"));
}

TisOutput mis_function(const Args& args, const TisInputs& in) {
  const MisConfig c = MisConfig::from(args);
  TensorMetrics metrics;
  const size_t n = in.loss_masks.size();
  std::vector<at::Tensor> train(n), rollout(n), masks(n);
  for (size_t i = 0; i < n; ++i) {
    train[i] = in.train_log_probs[i].to(at::kFloat);
    rollout[i] = in.rollout_log_probs[i].to(at::kFloat);
    masks[i] = in.loss_masks[i].to(at::kFloat);
    add_ppl_metrics(train[i], rollout[i], masks[i], metrics);
  }
  TisOutput out;
  out.pg_loss = in.pg_loss;
  out.loss_masks = in.loss_masks;
  if (c.use_tis) {
    std::vector<at::Tensor> weights(n), modified(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& m = masks[i];
      auto raw = train[i] - rollout[i];
      auto log_ratio = log_ratio_at(raw, m, c.tis_level);
      auto w = log_ratio.clamp(-kSafetyBound, kSafetyBound).exp();
      auto mask = m.clone();
      append(metrics, "tis_weight_before_bound", w);
      if (c.tis_mode == "truncate") {
        append(metrics, "tis_truncate_fraction", w > c.tis_upper);
        w = w.clamp(0, c.tis_upper) * m;
      } else if (c.tis_mode == "clip") {
        append(metrics, "tis_clip_fraction_low", w < c.tis_lower);
        append(metrics, "tis_clip_fraction_high", w > c.tis_upper);
        w = w.clamp(c.tis_lower, c.tis_upper) * m;
      } else {
        mask = reject_outside(w, m, c.tis_lower, c.tis_upper, "tis_", metrics);
        w = w * m;
      }
      append(metrics, "tis_weight_after_bound", w);
      if (c.use_rs) {
        auto rs_log_ratio =
            c.rs_level == c.tis_level ? log_ratio : log_ratio_at(raw, m, c.rs_level);
        auto rs_w = rs_log_ratio.clamp(-kSafetyBound, kSafetyBound).exp();
        mask = reject_outside(rs_w, mask, c.rs_lower, c.rs_upper, "rs_", metrics);
        if (c.rs_veto_threshold) {
          auto catastrophic =
              at::logical_and(raw < std::log(*c.rs_veto_threshold), m.to(at::kBool));
          auto has = catastrophic.any();
          append(metrics, "rs_catastrophic_token_fraction", catastrophic);
          append(metrics, "rs_catastrophic_seq_fraction", has.expand_as(m));
          mask = mask * at::logical_not(has).to(at::kFloat).expand_as(mask);
        }
      }
      append(metrics, "is_ratio_mean_after_tis_rs", w);
      weights[i] = w.detach();
      modified[i] = mask.detach();
    }
    if (c.tis_batch_normalize) {
      at::Tensor mean;
      if (c.tis_level == "token") {
        at::Tensor sum = at::zeros({}, weights[0].options()), count = at::zeros({}, sum.options());
        for (size_t i = 0; i < n; ++i) {
          sum = sum + masked_sum(weights[i], masks[i]);
          count = count + masks[i].sum();
        }
        mean = sum / count.clamp_min(1);
      } else {
        mean = at::zeros({}, weights[0].options());
        for (size_t i = 0; i < n; ++i) mean = mean + masked_mean(weights[i], masks[i]);
        mean = mean / static_cast<double>(n);
      }
      const bool usable = mean.item<double>() > 1e-8;
      for (size_t i = 0; i < n; ++i) {
        if (usable) weights[i] = weights[i] / mean;
        append(metrics, "batch_norm_factor",
               usable ? expand(mean, weights[i]) : at::ones_like(weights[i]));
      }
    }
    for (size_t i = 0; i < n; ++i) {
      append(metrics, "is_ratio_mean_final", expand(masked_mean(weights[i], masks[i]), weights[i]));
      append(metrics, "is_ratio_min_final",
             expand(masked_extreme(weights[i], masks[i], true), weights[i]));
      append(metrics, "is_ratio_max_final",
             expand(masked_extreme(weights[i], masks[i], false), weights[i]));
    }
    out.pg_loss = in.pg_loss * at::cat(weights).to(in.pg_loss.device());
    out.loss_masks = modified;
  }
  for (auto& [name, parts] : metrics) out.metrics["mis_" + name] = std::move(parts);
  return out;
}

}  // namespace vime::train
