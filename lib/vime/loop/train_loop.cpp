#include "vime/loop/train_loop.hpp"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <ostream>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/core/crash_point.hpp"
#include "vime/data/make_data_source.hpp"
#include "vime/data/tokenizer_hooks.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/dist/rank_device.hpp"
#include "vime/dist/rank_env.hpp"
#include "vime/engine/generation_config.hpp"
#include "vime/error.hpp"
#include "vime/hooks.hpp"
#include "vime/loop/async_options.hpp"
#include "vime/loop/ci_checks.hpp"
#include "vime/loop/critic_checkpoint.hpp"
#include "vime/loop/periodic.hpp"
#include "vime/loop/rank_channel.hpp"
#include "vime/loop/rollout_backend.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/rollout_driver.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/loop/train_batch.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/loop/trainer_schedule.hpp"
#include "vime/loop/version_lag.hpp"
#include "vime/metrics/metric_steps.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/metrics/phase_timer.hpp"
#include "vime/metrics/progress_bar.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/rollout/rollout_manager.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/c10d_reducer.hpp"
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

// The trainer's side of a run: actor (with optimizer and LR schedule), reference model, PPO's
// critic, and the phase timer they report to.
struct Trainer {
  std::unique_ptr<Model> actor_model, ref_model, critic_trunk, teacher_model;
  std::unique_ptr<train::GradReducer> reducer;  // SingleRank, or the data-parallel c10d group
  dist::ProcessGroup* world = nullptr;          // every rank (checkpoints); null alone
  metrics::PhaseTimer timer;
  std::unique_ptr<train::Actor> actor;
  std::unique_ptr<train::Critic> critic;
  ckpt::ResumeResult resume;
};

// Actor from --load / --ref-load / --hf-checkpoint (resumed with its optimizer), the reference
// model, the critic; then the init hook (slime's custom_megatron_init_path).
std::unique_ptr<Trainer> make_trainer(const Args& args, const TrainLoopOptions& options,
                                      const RunModelsOptions& models,
                                      const dist::ParallelGroups& groups, std::ostream& console) {
  auto t = std::make_unique<Trainer>();
  t->world = groups.world;
  if (auto* dp = groups.data_parallel()) {
    t->reducer = std::make_unique<train::C10dReducer>(*dp);
  } else {
    t->reducer = std::make_unique<train::SingleRank>();
  }
  const auto tp = TensorParallel::over(groups.tensor_parallel());
  const auto device = run_device();
  const auto source = actor_source(models);
  t->actor_model = std::make_unique<Model>(ckpt::checkpoint_model_config(source), models.dtype,
                                           device, static_cast<uint64_t>(options.seed), tp);
  t->actor_model->set_recompute(RecomputeOptions::from_args(args));
  if (options.needs_reference_model && !options.rollout_only) {
    if (auto ref = reference_source(models)) {
      t->ref_model = ckpt::load_model(*ref, models.dtype, device, tp);
      t->ref_model->set_requires_grad(false);
    }
  }
  t->actor = std::make_unique<train::Actor>(args, *t->actor_model, t->ref_model.get(), *t->reducer);
  t->actor->set_timer(&t->timer);
  if (auto teacher = opd_teacher_source(models); teacher && !options.rollout_only) {
    t->teacher_model = ckpt::load_model(*teacher, models.dtype, device, tp);
    t->teacher_model->set_requires_grad(false);
    t->actor->set_teacher_model(t->teacher_model.get());
  }
  t->resume = ckpt::load_for_training(args, *t->actor_model, t->actor->optimizer(),
                                      t->actor->lr_scheduler(), t->world);
  if (t->resume.is_loaded && t->reducer->rank() == 0)
    console << "vime train: weights from " << t->resume.from.string() << "\n";
  if (options.train_critic && !options.rollout_only) {
    t->critic_trunk = ckpt::load_model(source, models.dtype, device, tp);
    t->critic = std::make_unique<train::Critic>(args, *t->critic_trunk, *t->reducer);
    if (t->resume.is_resumed &&
        !load_critic(t->resume.from, t->resume.state.iteration, *t->critic, *t->critic_trunk,
                     !ckpt::CheckpointOptions::from(args).no_load_optim, t->world)) {
      if (t->reducer->rank() == 0)
        console << "vime train: no critic next to " << t->resume.from.string()
                << "; the critic starts afresh\n";
    }
  }
  if (auto init =
          plugin::load_hook_if_set<PluginKind::kInitHook>(args, "custom_megatron_init_path")) {
    init(args);
  }
  return t;
}

// Trains on one rollout: critic values first (PPO), then the actor (unless the critic trains alone
// this rollout), then the critic on the actor's returns. Returns the critic's metrics.
train::Metrics train_on(Trainer& t, const TrainLoopOptions& options, int64_t rollout_id,
                        train::TrainBatch& batch, bool actor_trains) {
  auto scope = t.timer.scope("train");
  std::vector<at::Tensor> old_values;
  if (t.critic) {
    old_values = t.critic->compute_values(batch);
    batch.values = old_values;  // on the device, for the actor's GAE
  }
  if (actor_trains) {
    std::unique_ptr<metrics::ProgressBar> bar;  // made when the actor knows its step count
    t.actor->set_step_callback([&](int64_t done, int64_t total) {
      if (t.reducer->rank() != 0) return;
      if (!bar)
        bar = metrics::console_progress("train " + std::to_string(rollout_id), "steps", total);
      if (done > 0) bar->advance();
    });
    before_model_train(options, t.actor->optimizer());
    t.actor->train(rollout_id, batch);
    if (bar) bar->finish();
    after_actor_train(options, rollout_id, *t.actor_model, t.ref_model.get());
  }
  if (!t.critic) return {};
  before_model_train(options, t.critic->optimizer());
  return t.critic->train(
      batch, old_values,
      actor_trains ? t.actor->returns() : t.critic->returns_without_actor(batch, old_values));
}

// train/step lines: each optimizer step's metrics (after the --ci-test step invariants), then the
// critic's, which slime tags with its role (train/critic-value_loss, ...).
void log_train_steps(metrics::MetricsLogger& logger, const CiCheckOptions& ci, int64_t rollout_id,
                     const std::vector<train::Metrics>& steps, size_t batch_size,
                     const train::Metrics& critic_metrics) {
  const auto num_steps = static_cast<int64_t>(steps.size());
  for (int64_t step_id = 0; step_id < num_steps; ++step_id) {
    check_step_invariants(ci, rollout_id, step_id, steps[step_id]);
    auto m = steps[step_id];
    m["train/global_batch_size"] = static_cast<double>(batch_size) / static_cast<double>(num_steps);
    logger.log("train/step", metrics::compute_train_step(rollout_id, num_steps, step_id), m);
  }
  if (critic_metrics.empty()) return;
  train::Metrics renamed;
  for (const auto& [k, v] : critic_metrics) {
    const auto slash = k.find('/');
    renamed["train/critic-" + (slash == std::string::npos ? k : k.substr(slash + 1))] = v;
  }
  logger.log("train/step",
             metrics::compute_train_step(rollout_id, std::max<int64_t>(num_steps, 1), 0), renamed);
}

// A Megatron-layout checkpoint of rollout `rollout_id` (the critic's first), written by every rank
// together (rank 0: the model; with the distributed optimizer each rank its optimizer shard).
void save_checkpoint(Trainer& t, const TrainLoopOptions& options, int64_t rollout_id) {
  auto scope = t.timer.scope("save_model");
  if (t.critic) {
    save_critic(*options.save, rollout_id, *t.critic, *t.critic_trunk, options.save_optimizer,
                t.world);
  }
  ckpt::TrainState state;
  state.iteration = rollout_id;
  state.optimizer_steps = t.actor->optimizer().num_steps();
  state.lr_scheduler_steps = t.actor->lr_scheduler().num_steps();
  ckpt::SaveOptions save;
  save.save_optimizer = options.save_optimizer;
  save.save_rng = options.save_rng;
  ckpt::save_checkpoint(*options.save, *t.actor_model, &t.actor->optimizer(), state, save, t.world);
}

// Rank 0's save: the data source's position too, the console line, then --save-hf's HF copy.
void save(Trainer& t, const TrainLoopOptions& options, const RunModelsOptions& models,
          DataSource& data_source, int64_t rollout_id, std::ostream& console) {
  data_source.save(rollout_id);
  crash_point("data_saved");
  save_checkpoint(t, options, rollout_id);
  console << "vime train: saved " << *options.save << "/" << ckpt::iteration_dir_name(rollout_id)
          << "\n";
  if (auto hf = save_hf_copy(options, rollout_id, *t.actor_model, models.hf_checkpoint))
    console << "vime train: saved HF copy " << hf->string() << "\n";
}

// --offload-train: optimizer state (masters, Adam moments, main grads) in host memory while the
// rollout runs, back on the device for training.
void offload_train_state(Trainer& t, bool offload) {
  auto apply = [offload](Optimizer& o) {
    if (offload && !o.is_offloaded()) o.offload();
    if (!offload && o.is_offloaded()) o.reload();
  };
  apply(t.actor->optimizer());
  if (t.critic) apply(t.critic->optimizer());
}

// perf/*_time of the phases, perf/step_time and the actor's train tokens/s.
Metrics perf_metrics(const metrics::PhaseTimer& timer, double step_time,
                     const train::TrainBatch& batch) {
  auto perf = timer.perf_metrics();
  perf["perf/step_time"] = step_time;
  double train_tokens = 0;
  for (const auto& t : batch.tokens) train_tokens += static_cast<double>(t.size());
  if (perf.count("perf/actor_train_time") > 0 && perf["perf/actor_train_time"] > 0) {
    perf["perf/actor_train_tok_per_s"] = train_tokens / perf["perf/actor_train_time"];
  }
  return perf;
}

// The mean over optimizer steps of `key` in the actor's step metrics; nullopt when no step has it.
std::optional<double> step_mean(const std::vector<train::Metrics>& steps, const std::string& key) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& step : steps) {
    if (auto it = step.find(key); it != step.end()) {
      sum += it->second;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

// Ranks > 0 of a data-parallel run: no data, rollout manager or metrics; each rollout they take
// rank 0's order, train their share of the batch with it, save with it and bump their engine's
// weights (their engines serve rank 0's requests in the meantime).
int run_follower(const Args& args, const TrainLoopOptions& options, const RunModelsOptions& models,
                 const dist::ParallelGroups& groups, std::ostream& console) {
  dist::ProcessGroup& group = *groups.world;
  auto tokenizer = load_run_tokenizer(models);
  auto trainer = make_trainer(args, options, models, groups, console);
  Model& actor_model = *trainer->actor_model;
  RankChannel channel(group);
  const auto range = channel.receive_range();
  auto backend =
      make_follower_backend(args, actor_model, tokenizer.get(), range.start_rollout_id, group);
  for (int64_t rollout_id = range.start_rollout_id; rollout_id < range.num_rollout; ++rollout_id) {
    auto order = channel.receive(rollout_id);
    if (!order.train) continue;
    backend->before_train();
    if (options.offload_train) offload_train_state(*trainer, false);
    train_on(*trainer, options, rollout_id, order.batch,
             actor_trains(options, rollout_id, trainer->critic != nullptr));
    if (order.save) {
      save_checkpoint(*trainer, options, rollout_id);
      join_save_hf_gather(options, actor_model, group.rank());
    }
    if (options.offload_train) offload_train_state(*trainer, true);
    backend->update_weights(actor_model, rollout_id + 1);
  }
  channel.wait_finish();
  return 0;
}

}  // namespace

int run_training(const Args& given_args, std::ostream& console) {
  const Args args = with_run_defaults(given_args);
  const auto options = TrainLoopOptions::from(args);
  const auto async = AsyncOptions::from(args);
  const auto models = RunModelsOptions::from(args);
  // vLLM forces NCCL_CUMEM_ENABLE=0 in its processes (vime's launcher does the same for `vime
  // serve`); NCCL peers that disagree on it fail their P2P setup ("Cuda failure 'invalid
  // argument'"), so the trainer matches before its first NCCL communicator.
  if (RolloutBackendOptions::from(args).kind == RolloutBackendKind::kVllm)
    ::setenv("NCCL_CUMEM_ENABLE", "0", 1);

  // Ranks: one process per GPU (vime's launcher, torchrun or Slurm); a world of one runs alone.
  const auto env = dist::rank_env_from_environment(args);
  const auto device = dist::bind_rank_device(env);
  std::unique_ptr<dist::ProcessGroup> group;
  if (device.is_cuda() && options.distributed_backend != "nccl") {
    throw UsageError("--distributed-backend " + options.distributed_backend +
                     ": vime's GPU ranks talk over NCCL (Gloo carries CPU ranks); drop the flag");
  }
  if (!env.is_single()) {
    group = dist::ProcessGroup::create(
        env, device,
        std::chrono::minutes(std::max<int64_t>(options.distributed_timeout_minutes, 1)));
  }
  at::manual_seed(static_cast<uint64_t>(options.seed));
  // Tensor x data parallel groups in Megatron's rank order (tensor-parallel ranks adjacent).
  const auto groups = dist::make_parallel_groups(group.get(), models.tensor_parallel_size);
  if (group && group->rank() != 0) return run_follower(args, options, models, groups, console);

  auto logger = metrics::make_metrics_logger(args, &console);
  auto tokenizer = load_run_tokenizer(models);
  auto trainer = make_trainer(args, options, models, groups, console);
  Model& actor_model = *trainer->actor_model;
  std::optional<RankChannel> channel;
  if (group) channel.emplace(*group);

  // --- Data, engine, rollout manager.
  auto data_source = data::make_data_source(args, data::chat_template_renderer(*tokenizer),
                                            data::token_counter(*tokenizer));
  const int64_t start_rollout_id = options.start_rollout_id.value_or(
      trainer->resume.is_resumed ? trainer->resume.state.iteration + 1 : 0);
  if (start_rollout_id > 0) data_source->load(start_rollout_id - 1);
  const int64_t prompts = data_source->size();
  const int64_t num_rollout = resolve_num_rollout(options, prompts);
  const std::optional<int64_t> per_epoch =
      options.num_rollout || prompts <= 0
          ? std::nullopt
          : std::optional<int64_t>(prompts / rollout_batch_size(options));
  if (channel) channel->publish_range({start_rollout_id, num_rollout});

  auto backend = make_rollout_backend(args, actor_model, tokenizer.get(), start_rollout_id, console,
                                      group.get());
  // What the rollout side sees: args plus the engines the backend started, by model (slime's
  // args.sglang_model_routers), so plugins can reach a judge or teacher model of --vllm-config.
  Args rollout_args = args;
  if (Json urls = backend->model_urls(); !urls.is_null())
    rollout_args.set("vllm_model_urls", std::move(urls), ArgSource::kDerived);
  // The embedded backend has one engine per data-parallel group (per rank without tensor
  // parallelism): the rollout keeps that many engines busy.
  if (group && !args.is_set("rollout_num_gpus") && backend->model_urls().is_null()) {
    rollout_args.set("rollout_num_gpus", Json(static_cast<int64_t>(group->size() / groups.tp_size)),
                     ArgSource::kDerived);
  }
  if (RolloutBackendOptions::from(args).kind == RolloutBackendKind::kNative)
    rollout_args.set(rollout::kSeedEachSampleArg, Json(true), ArgSource::kDerived);
  if (async.mode == AsyncMode::kFully && !rollout_args.is_set("rollout_function_path"))
    rollout_args.set("rollout_function_path", Json("fully_async"), ArgSource::kDerived);
  rollout::RolloutManager manager(rollout_args, backend->engine(), *tokenizer, *data_source);
  // Generates in turn, one rollout ahead (--async) or all along (--fully-async).
  RolloutDriver driver(async, manager, *backend, num_rollout);
  driver.set_start_version(start_rollout_id);
  // Overlap and weight-transfer figures where the engines have weights of their own.
  const bool perf_of_disaggregation = async.on() || !backend->update_metrics().empty();

  auto run_eval = [&](int64_t rollout_id) {
    driver.settle();
    auto result = manager.eval(rollout_id);
    if (!result.metrics.empty()) {
      logger->log("eval/step", metrics::compute_rollout_step(args, rollout_id), result.metrics);
    }
  };
  if (options.eval_interval.has_value() && start_rollout_id == 0 && options.eval_before_train) {
    run_eval(0);
  }

  console << "vime train: rollouts " << start_rollout_id << ".." << num_rollout - 1 << " on "
          << (actor_model.device().is_cuda() ? "CUDA" : "CPU") << ", "
          << c10::toString(models.dtype);
  if (group) {
    console << ", " << group->size() / groups.tp_size << " data-parallel ranks";
    if (groups.tp_size > 1) console << " x " << groups.tp_size << " tensor-parallel";
  }
  console << "; generating with " << backend->describe() << "\n";
  auto run_bar = metrics::console_progress("run", "rollouts", num_rollout - start_rollout_id);
  for (int64_t rollout_id = start_rollout_id; rollout_id < num_rollout; ++rollout_id) {
    const double step_start = now_s();
    trainer->timer.reset();
    // 1. Generate.
    auto rollout = driver.take(rollout_id);
    const int64_t rollout_step = metrics::compute_rollout_step(args, rollout_id);
    if (!rollout.metrics.empty()) logger->log("rollout/step", rollout_step, rollout.metrics);
    if (options.rollout_only) {
      if (channel) channel->publish({rollout_id, /*train=*/false, /*save=*/false, {}});
      run_bar->advance();
      continue;
    }
    // 2. The engines stop (and give memory back where they share the device) while training runs.
    backend->before_train();
    // 3. Train: every rank gets the whole batch and trains its share (slime's DP split).
    const double train_start = now_s();
    const auto tokens_at_train_start = backend->generated_tokens();
    auto converted = to_train_batch(rollout.data);
    if (converted.batch.size() == 0) {
      throw Error("rollout " + std::to_string(rollout_id) +
                  " produced no sample with a response to train on");
    }
    const bool do_save =
        options.save &&
        should_run_periodic_action(rollout_id, options.save_interval, per_epoch, num_rollout);
    if (channel) channel->publish({rollout_id, /*train=*/true, do_save, converted.batch});
    if (options.offload_train) offload_train_state(*trainer, false);
    const bool actor_trains = loop::actor_trains(options, rollout_id, trainer->critic != nullptr);
    const auto critic_metrics =
        train_on(*trainer, options, rollout_id, converted.batch, actor_trains);
    log_train_steps(*logger, options.ci, rollout_id,
                    actor_trains ? trainer->actor->step_metrics() : std::vector<train::Metrics>{},
                    converted.batch.size(), critic_metrics);
    Metrics per_rollout = train_data_metrics(rollout.data);
    if (actor_trains)
      for (const auto& [k, v] : trainer->actor->rollout_data_metrics()) per_rollout[k] = v;
    check_rollout_invariants(options.ci, rollout_id, per_rollout);
    const double train_end = now_s();
    if (async.on()) {
      // Which weights generated what this step trained on, and how far the engine's log-probs
      // were from the trainer's at each lag.
      const auto lags = version_lags(rollout.samples, rollout_id);
      for (const auto& [k, v] : lags.metrics) per_rollout[k] = v;
      if (const auto diff =
              step_mean(trainer->actor->step_metrics(), "train/train_rollout_logprob_abs_diff");
          diff && lags.uniform)
        per_rollout["train/train_rollout_logprob_abs_diff/lag_" + std::to_string(*lags.uniform)] =
            *diff;
    }
    // 4. Save (the data source's position once the rollout in flight has taken its prompts).
    if (do_save) {
      driver.settle();
      auto hold = manager.lock_data_source();
      save(*trainer, options, models, *data_source, rollout_id, console);
    }
    if (options.offload_train) offload_train_state(*trainer, true);
    // 5. Weight update (under --async every --update-weights-interval rollouts).
    if (driver.updates_weights_after(rollout_id)) {
      driver.settle();  // train_async.py: the rollout in flight finishes first (wait_rollout_time)
      {
        auto scope = trainer->timer.scope("update_weights");
        driver.update_weights(actor_model, rollout_id);
      }
      for (const auto& [k, v] : backend->update_metrics()) per_rollout[k] = v;
    }
    for (const auto& [k, v] : perf_metrics(trainer->timer, now_s() - step_start, converted.batch))
      per_rollout[k] = v;
    if (perf_of_disaggregation) {
      for (const auto& [k, v] : driver.step_metrics(train_start, train_end)) per_rollout[k] = v;
      // How much the engines generated while the trainer trained (0 in turn).
      if (auto tokens = backend->generated_tokens(); tokens && tokens_at_train_start)
        per_rollout["perf/engine_tok_per_s_while_training"] =
            static_cast<double>(*tokens - *tokens_at_train_start) /
            std::max(train_end - train_start, 1e-9);
    }
    logger->log("rollout/step", rollout_step, per_rollout);
    // 6. Eval.
    if (should_run_periodic_action(rollout_id, options.eval_interval, per_epoch)) {
      run_eval(rollout_id);
    }
    run_bar->advance();
  }
  run_bar->finish();
  if (channel) channel->finish();
  console << "vime train: done\n";
  return 0;
}

}  // namespace vime::loop
