#include "vime/rollout/rollout_manager.hpp"

#include <chrono>
#include <iostream>
#include <variant>

#include "vime/core/elapsed.hpp"
#include "vime/error.hpp"
#include "vime/eval/dataset_presets.hpp"
#include "vime/eval/eval_dataset_config.hpp"
#include "vime/eval/eval_options.hpp"
#include "vime/hooks.hpp"
#include "vime/metrics/metrics_options.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/rollout/debug_rollout_data.hpp"
#include "vime/rollout/default_generate.hpp"
#include "vime/rollout/default_rollout.hpp"
#include "vime/rollout/eval_rollout.hpp"
#include "vime/rollout/failed_samples.hpp"
#include "vime/rollout/fully_async_rollout.hpp"
#include "vime/rollout/group_generator.hpp"
#include "vime/rollout/opd_teacher.hpp"
#include "vime/rollout/rollout_log.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/rollout/sft_rollout.hpp"
#include "vime/rollout/train_data.hpp"

namespace vime::rollout {
namespace {

using RolloutPlugin = plugin::PluginFunction<PluginKind::kRollout>;

// Unset, or slime's own default, means vime's built-in rollout.
bool is_default_rollout_name(const std::optional<std::string>& name) {
  return !name || *name == "slime.rollout.sglang_rollout.generate_rollout";
}

std::vector<Sample> flatten(std::vector<SampleGroup> groups) {
  std::vector<Sample> out;
  for (SampleGroup& group : groups)
    for (Sample& s : group) out.push_back(std::move(s));
  return out;
}

}  // namespace

struct RolloutManager::Impl {
  const Args args;  // for the plugins
  const RolloutOptions options;
  const eval::EvalOptions eval_options;
  const metrics::SampleMetricsOptions metrics_options;
  EngineClient& engine;
  const Tokenizer& tokenizer;
  DataSource& data_source;
  GroupGenerator generator;
  std::unique_ptr<DefaultRollout> default_rollout;
  std::unique_ptr<FullyAsyncRollout> fully_async;  // after generator: its worker goes first
  std::unique_ptr<rollout::EvalRunner> eval_rollout;
  bool sft = false;
  RolloutPlugin rollout_fn, eval_fn;
  TrainDataConverter convert;
  plugin::PluginFunction<PluginKind::kRolloutLog> rollout_log;
  plugin::PluginFunction<PluginKind::kEvalRolloutLog> eval_log;
  std::unique_ptr<OpdTeacher> opd_teacher;  // --opd-teacher-model

  Impl(const Args& a, EngineClient& e, const Tokenizer& t, DataSource& d)
      : args(a),
        options(RolloutOptions::from(args)),
        eval_options(eval::EvalOptions::from(args)),
        metrics_options(metrics::SampleMetricsOptions::from(args)),
        engine(e),
        tokenizer(t),
        data_source(d),
        generator(args, options, engine, tokenizer) {
    const auto& rollout_name = options.rollout_function_path;
    sft = rollout_name && is_sft_rollout_name(*rollout_name);
    if (rollout_name && is_fully_async_rollout_name(*rollout_name)) {
      fully_async = std::make_unique<FullyAsyncRollout>(options, generator, data_source);
    } else if (!sft && is_default_rollout_name(rollout_name)) {
      default_rollout = std::make_unique<DefaultRollout>(args, options, generator);
    } else if (!sft) {
      rollout_fn = plugin::load_plugin<PluginKind::kRollout>(
          *rollout_name, "--rollout-function-path", "generate_rollout");
    }
    if (const auto& eval_name = options.eval_function_path;
        eval_name && !is_default_rollout_name(eval_name)) {
      eval_fn = plugin::load_plugin<PluginKind::kRollout>(*eval_name, "--eval-function-path",
                                                          "generate_rollout");
    } else if (!options.eval_function_path && rollout_fn) {
      eval_fn = rollout_fn;  // slime: --eval-function-path defaults to the rollout function
    }
    if (!eval_fn) {
      std::vector<eval::EvalDatasetConfig> datasets = eval::load_eval_dataset_configs(eval_options);
      eval_rollout = std::make_unique<rollout::EvalRunner>(options, eval_options, generator,
                                                           tokenizer, std::move(datasets));
    }
    convert = load_train_data_converter(args, options);
    if (options.opd_teacher) opd_teacher = std::make_unique<OpdTeacher>(*options.opd_teacher);
    if (const auto& spec = options.rollout_log_path)
      rollout_log = plugin::load_plugin<PluginKind::kRolloutLog>(
          *spec, "--custom-rollout-log-function-path", "rollout_log");
    if (const auto& spec = options.eval_rollout_log_path)
      eval_log = plugin::load_plugin<PluginKind::kEvalRolloutLog>(
          *spec, "--custom-eval-rollout-log-function-path", "eval_rollout_log");
  }

  RolloutContext context(bool evaluation, int64_t rollout_id) {
    RolloutContext ctx{args, engine, tokenizer, evaluation, {}, {}};
    if (options.max_response_len) ctx.sampling_params = rollout_sampling_params(options);
    if (evaluation) {
      SamplingParams& p = ctx.sampling_params;
      p.temperature = options.eval_temperature.value_or(p.temperature);
      p.top_p = options.eval_top_p.value_or(p.top_p);
      p.top_k = options.eval_top_k.value_or(p.top_k);
      p.max_new_tokens = options.eval_max_response_len.value_or(p.max_new_tokens);
    }
    ctx.generate_groups = [this, evaluation, rollout_id](std::vector<SampleGroup> groups,
                                                         const SamplingParams& params) {
      generator.clear_abort();
      return generator.run(std::move(groups), params, evaluation, rollout_id);
    };
    return ctx;
  }

  RolloutFnOutput call_plugin(const RolloutPlugin& fn, int64_t rollout_id, bool evaluation) {
    RolloutContext ctx = context(evaluation, rollout_id);
    return fn(ctx, rollout_id, data_source, evaluation);
  }

  // The served teacher's log-probs of the samples that have none (slime asks it as the reward
  // model, before the samples are saved and converted).
  void add_teacher_log_probs(std::vector<Sample>& samples, Metrics& metrics) {
    if (!opd_teacher) return;
    const auto start = std::chrono::steady_clock::now();
    opd_teacher->score(samples);
    metrics["perf/teacher_log_probs_time"] = seconds_since(start);
  }

  RolloutFnTrainOutput run_train(int64_t rollout_id) {
    if (default_rollout) return default_rollout->generate(rollout_id, data_source);
    if (fully_async) return fully_async->generate(rollout_id);
    if (sft) return sft_rollout(tokenizer, data_source, options.batch_size());
    RolloutFnOutput out = call_plugin(rollout_fn, rollout_id, false);
    if (auto* train = std::get_if<RolloutFnTrainOutput>(&out)) return std::move(*train);
    throw Error("--rollout-function-path " + rollout_fn.description() +
                " returned eval output for a train rollout");
  }
};

RolloutManager::RolloutManager(const Args& args, EngineClient& engine, const Tokenizer& tokenizer,
                               DataSource& data_source)
    : impl_(std::make_unique<Impl>(args, engine, tokenizer, data_source)) {}

RolloutManager::~RolloutManager() = default;

TrainRollout RolloutManager::generate(int64_t rollout_id) {
  Impl& m = *impl_;
  const auto start = std::chrono::steady_clock::now();
  TrainRollout out;
  Metrics extra;
  if (const auto& load = m.options.load_debug_rollout_data) {
    out.samples =
        load_debug_rollout_data(debug_rollout_data_path(*load, std::to_string(rollout_id)));
    if (const auto& ratio = m.options.load_debug_rollout_data_subsample)
      out.samples = subsample_debug_rollout_data(std::move(out.samples), *ratio);
    m.add_teacher_log_probs(out.samples, extra);
  } else {
    RolloutFnTrainOutput result = m.run_train(rollout_id);
    extra = std::move(result.metrics);
    out.samples = flatten(std::move(result.samples));
    m.add_teacher_log_probs(out.samples, extra);
    if (const auto& save = m.options.save_debug_rollout_data)
      save_debug_rollout_data(debug_rollout_data_path(*save, std::to_string(rollout_id)),
                              rollout_id, out.samples);
  }
  const double rollout_time = seconds_since(start);
  out.data = m.convert(out.samples);
  if (!m.rollout_log || !m.rollout_log(rollout_id, m.args, out.samples, extra, rollout_time))
    out.metrics =
        train_rollout_metrics(m.options, m.metrics_options, out.samples, extra, rollout_time);
  return out;
}

EvalRollout RolloutManager::eval(int64_t rollout_id) {
  Impl& m = *impl_;
  EvalRollout out;
  std::map<std::string, size_t> samples_per_prompt;
  if (m.eval_fn) {
    RolloutFnOutput result = m.call_plugin(m.eval_fn, rollout_id, true);
    auto* eval = std::get_if<RolloutFnEvalOutput>(&result);
    if (!eval)
      throw Error("--eval-function-path " + m.eval_fn.description() +
                  " returned train output for an eval rollout");
    out.output = std::move(*eval);
  } else {
    out.output = m.eval_rollout->run(rollout_id);
    samples_per_prompt = m.eval_rollout->samples_per_prompt();
  }
  // Failed eval samples score 0: say so, or the eval just reads low.
  for (const auto& [name, result] : out.output.data) {
    if (auto failed = describe_failed_samples(result.samples))
      std::cerr << "vime: warning: eval " << rollout_id << ": " << name << ": " << *failed << "\n";
  }
  if (const auto& save = m.options.save_debug_rollout_data) {
    std::vector<Sample> all;
    for (const auto& [name, result] : out.output.data)
      all.insert(all.end(), result.samples.begin(), result.samples.end());
    save_debug_rollout_data(debug_rollout_data_path(*save, "eval_" + std::to_string(rollout_id)),
                            rollout_id, all);
  }
  if (!m.eval_log || !m.eval_log(rollout_id, m.args, out.output, out.output.metrics))
    out.metrics = eval_rollout_metrics(m.metrics_options, out.output, samples_per_prompt);
  return out;
}

void RolloutManager::abort() { impl_->generator.abort(); }

void RolloutManager::set_weight_version(int64_t version) {
  if (impl_->fully_async) impl_->fully_async->set_weight_version(version);
}

std::unique_lock<std::mutex> RolloutManager::lock_data_source() {
  if (impl_->fully_async) return impl_->fully_async->lock_data_source();
  return {};
}

}  // namespace vime::rollout
