#include "vime/loop/train_loop.hpp"

#include <ATen/ATen.h>

#include <chrono>
#include <optional>
#include <ostream>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/data/make_data_source.hpp"
#include "vime/data/tokenizer_hooks.hpp"
#include "vime/engine/generation_config.hpp"
#include "vime/error.hpp"
#include "vime/hooks.hpp"
#include "vime/loop/ci_checks.hpp"
#include "vime/loop/periodic.hpp"
#include "vime/loop/rollout_backend.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/loop/train_batch.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/metrics/metric_steps.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/metrics/phase_timer.hpp"
#include "vime/metrics/progress_bar.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/rollout/rollout_manager.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/critic.hpp"
#include "vime/train/grad_reducer.hpp"

namespace vime::loop {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t rollout_batch_size(const TrainLoopOptions& options) {
  if (!options.rollout_batch_size) throw UsageError("--rollout-batch-size is required");
  return *options.rollout_batch_size;
}

// slime's num_rollout: --num-rollout, else epochs x (prompts // rollout_batch_size).
int64_t resolve_num_rollout(const TrainLoopOptions& options, int64_t prompts_per_epoch) {
  if (options.num_rollout) return *options.num_rollout;
  if (!options.num_epoch) {
    throw UsageError("give --num-rollout or --num-epoch: how long to train");
  }
  return prompts_per_epoch / rollout_batch_size(options) * *options.num_epoch;
}

}  // namespace

int run_training(const Args& given_args, std::ostream& console) {
  const Args args = with_run_defaults(given_args);
  const auto options = TrainLoopOptions::from(args);
  const auto models = RunModelsOptions::from(args);
  if (options.num_critic_only_steps > 0) {
    throw UsageError(
        "--num-critic-only-steps is not supported yet: the critic trains with the actor");
  }
  const bool rollout_only = options.rollout_only;
  const bool is_ppo = options.train_critic;
  const auto device = run_device();
  const auto dtype = models.dtype;
  at::manual_seed(static_cast<uint64_t>(options.seed));

  auto logger = metrics::make_metrics_logger(args, &console);
  auto tokenizer = load_run_tokenizer(models);

  // --- Models: actor (+ optimizer) from --load / --ref-load / --hf-checkpoint, reference, critic.
  const auto source = actor_source(models);
  auto actor_model = std::make_unique<Model>(ckpt::checkpoint_model_config(source), dtype, device,
                                             static_cast<uint64_t>(options.seed));
  actor_model->set_recompute(RecomputeOptions::from_args(args));
  std::unique_ptr<Model> ref_model;
  if (options.needs_reference_model && !rollout_only) {
    if (auto ref = reference_source(models)) {
      ref_model = ckpt::load_model(*ref, dtype, device);
      ref_model->set_requires_grad(false);
    }
  }
  train::SingleRank reducer;
  metrics::PhaseTimer timer;
  train::Actor actor(args, *actor_model, ref_model.get(), reducer);
  actor.set_timer(&timer);
  const auto resume =
      ckpt::load_for_training(args, *actor_model, actor.optimizer(), actor.lr_scheduler());
  if (resume.is_loaded) console << "vime train: weights from " << resume.from.string() << "\n";
  std::unique_ptr<Model> critic_trunk;
  std::unique_ptr<train::Critic> critic;
  if (is_ppo && !rollout_only) {
    critic_trunk = ckpt::load_model(source, dtype, device);
    critic = std::make_unique<train::Critic>(args, *critic_trunk, reducer);
  }

  if (auto init =
          plugin::load_hook_if_set<PluginKind::kInitHook>(args, "custom_megatron_init_path")) {
    init(args);
  }

  // --- Data, engine, rollout manager.
  auto data_source = data::make_data_source(args, data::chat_template_renderer(*tokenizer),
                                            data::token_counter(*tokenizer));
  const int64_t start_rollout_id =
      options.start_rollout_id.value_or(resume.is_resumed ? resume.state.iteration + 1 : 0);
  if (start_rollout_id > 0) data_source->load(start_rollout_id - 1);
  const int64_t prompts = data_source->size();
  const int64_t num_rollout = resolve_num_rollout(options, prompts);
  const std::optional<int64_t> per_epoch =
      options.num_rollout || prompts <= 0
          ? std::nullopt
          : std::optional<int64_t>(prompts / rollout_batch_size(options));

  auto backend =
      make_rollout_backend(args, *actor_model, tokenizer.get(), start_rollout_id, console);
  // What the rollout side sees: args plus the engines the backend started, by model (slime's
  // args.sglang_model_routers), so plugins can reach a judge or teacher model of --vllm-config.
  Args rollout_args = args;
  if (Json urls = backend->model_urls(); !urls.is_null())
    rollout_args.set("vllm_model_urls", std::move(urls), ArgSource::kDerived);
  rollout::RolloutManager manager(rollout_args, backend->engine(), *tokenizer, *data_source);

  auto run_eval = [&](int64_t rollout_id) {
    auto result = manager.eval(rollout_id);
    if (!result.metrics.empty()) {
      logger->log("eval/step", metrics::compute_rollout_step(args, rollout_id), result.metrics);
    }
  };
  const auto eval_interval = options.eval_interval;
  if (eval_interval.has_value() && start_rollout_id == 0 && options.eval_before_train) {
    run_eval(0);
  }

  console << "vime train: rollouts " << start_rollout_id << ".." << num_rollout - 1 << " on "
          << (device.is_cuda() ? "CUDA" : "CPU") << ", " << c10::toString(dtype)
          << "; generating with " << backend->describe() << "\n";
  auto run_bar = metrics::console_progress("run", "rollouts", num_rollout - start_rollout_id);
  for (int64_t rollout_id = start_rollout_id; rollout_id < num_rollout; ++rollout_id) {
    const double step_start = now_s();
    timer.reset();
    // 1. Generate.
    auto rollout = manager.generate(rollout_id);
    const int64_t rollout_step = metrics::compute_rollout_step(args, rollout_id);
    if (!rollout.metrics.empty()) logger->log("rollout/step", rollout_step, rollout.metrics);
    if (rollout_only) {
      run_bar->advance();
      continue;
    }

    // 2. The engines stop (and give memory back where they share the device) while training runs.
    backend->before_train();

    // 3. Train: critic values first (PPO), then the actor, then the critic on the actor's returns.
    auto converted = to_train_batch(rollout.data);
    if (converted.batch.size() == 0) {
      throw Error("rollout " + std::to_string(rollout_id) +
                  " produced no sample with a response to train on");
    }
    train::Metrics critic_metrics;
    std::vector<at::Tensor> old_values;
    {
      auto scope = timer.scope("train");
      if (critic) {
        old_values = critic->compute_values(converted.batch);
        converted.batch.values = old_values;  // on the device, for the actor's GAE
      }
      std::unique_ptr<metrics::ProgressBar> bar;  // made when the actor knows its step count
      actor.set_step_callback([&](int64_t done, int64_t total) {
        if (!bar)
          bar = metrics::console_progress("train " + std::to_string(rollout_id), "steps", total);
        if (done > 0) bar->advance();
      });
      actor.train(rollout_id, converted.batch);
      if (bar) bar->finish();
      if (critic) critic_metrics = critic->train(converted.batch, old_values, actor.returns());
    }
    const auto& steps = actor.step_metrics();
    for (size_t step_id = 0; step_id < steps.size(); ++step_id) {
      check_step_invariants(options.ci, rollout_id, static_cast<int64_t>(step_id), steps[step_id]);
      auto m = steps[step_id];
      m["train/global_batch_size"] =
          static_cast<double>(converted.batch.size()) / static_cast<double>(steps.size());
      logger->log("train/step",
                  metrics::compute_train_step(rollout_id, static_cast<int64_t>(steps.size()),
                                              static_cast<int64_t>(step_id)),
                  m);
    }
    if (!critic_metrics.empty()) {
      train::Metrics renamed;
      // slime tags the critic's role in the key: train/critic-value_loss, ...
      for (const auto& [k, v] : critic_metrics) {
        const auto slash = k.find('/');
        renamed["train/critic-" + (slash == std::string::npos ? k : k.substr(slash + 1))] = v;
      }
      logger->log("train/step",
                  metrics::compute_train_step(rollout_id, static_cast<int64_t>(steps.size()), 0),
                  renamed);
    }
    Metrics per_rollout = train_data_metrics(rollout.data);
    for (const auto& [k, v] : actor.rollout_data_metrics()) per_rollout[k] = v;
    check_rollout_invariants(options.ci, rollout_id, per_rollout);

    // 4. Save.
    if (options.save &&
        should_run_periodic_action(rollout_id, options.save_interval, per_epoch, num_rollout)) {
      auto scope = timer.scope("save_model");
      data_source->save(rollout_id);
      ckpt::TrainState state;
      state.iteration = rollout_id;
      state.optimizer_steps = actor.optimizer().num_steps();
      state.lr_scheduler_steps = actor.lr_scheduler().num_steps();
      ckpt::SaveOptions save;
      save.save_optimizer = options.save_optimizer;
      save.save_rng = options.save_rng;
      ckpt::save_checkpoint(*options.save, *actor_model, &actor.optimizer(), state, save);
      console << "vime train: saved " << *options.save << "/"
              << ckpt::iteration_dir_name(rollout_id) << "\n";
    }

    // 5. Weight update.
    {
      auto scope = timer.scope("update_weights");
      backend->update_weights(*actor_model, rollout_id + 1);
    }
    auto perf = timer.perf_metrics();
    const double step_time = now_s() - step_start;
    perf["perf/step_time"] = step_time;
    double train_tokens = 0;
    for (const auto& t : converted.batch.tokens) train_tokens += static_cast<double>(t.size());
    if (perf.count("perf/actor_train_time") > 0 && perf["perf/actor_train_time"] > 0) {
      perf["perf/actor_train_tok_per_s"] = train_tokens / perf["perf/actor_train_time"];
    }
    for (const auto& [k, v] : perf) per_rollout[k] = v;
    logger->log("rollout/step", rollout_step, per_rollout);

    // 6. Eval.
    if (should_run_periodic_action(rollout_id, eval_interval, per_epoch)) run_eval(rollout_id);
    run_bar->advance();
  }
  run_bar->finish();
  console << "vime train: done\n";
  return 0;
}

}  // namespace vime::loop
