#include "vime/loop/trainer.hpp"

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "vime/hooks.hpp"
#include "vime/loop/critic_checkpoint.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/loop/trainer_schedule.hpp"
#include "vime/metrics/progress_bar.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/train/c10d_reducer.hpp"

namespace vime::loop {

namespace {

// What a LoRA run cannot do, refused by flag with the reason.
void check_lora_run(const Args& args, const TrainLoopOptions& options, const LoraConfig& lora) {
  if (options.ref_update_interval && *options.ref_update_interval > 0) {
    throw UsageError(
        "--ref-update-interval cannot be combined with --lora-rank: the reference "
        "model is the frozen base the adapters train on");
  }
  if (lora.dropout > 0 && RecomputeOptions::from(args).enabled) {
    throw UsageError(
        "--lora-dropout > 0 cannot be combined with --recompute-granularity: the "
        "recomputed forward would draw other dropout masks");
  }
}

}  // namespace

std::unique_ptr<Trainer> make_trainer(const Args& args, const TrainLoopOptions& options,
                                      const RunModelsOptions& models,
                                      const dist::ParallelGroups& groups, std::ostream& console) {
  auto t = std::make_unique<Trainer>();
  t->world = groups.world;
  if (auto* dp = groups.data_parallel()) {
    t->reducer = std::make_unique<train::C10dReducer>(*dp, groups.gradient());
  } else {
    t->reducer = std::make_unique<train::SingleRank>();
  }
  const auto tp = TensorParallel::over(groups.tensor_parallel());
  const auto cp = ContextParallel::over(groups.context_parallel());
  const auto device = run_device();
  const auto source = actor_source(models);
  const auto config = ckpt::checkpoint_model_config(source);
  set_cpu_threads(config, device);
  t->actor_model = std::make_unique<Model>(config, models.dtype, device,
                                           static_cast<uint64_t>(options.seed), tp);
  t->actor_model->set_recompute(RecomputeOptions::from(args));
  t->actor_model->set_context_parallel(cp);
  const auto ep = ExpertParallel::over(groups.expert_parallel(), groups.expert_data_parallel());
  t->actor_model->set_expert_parallel(ep);
  // The weights a LoRA run's adapters sit on: --ref-load (its reference), else --hf-checkpoint.
  t->base_model = models.ref_load.value_or(models.hf_checkpoint.value_or(""));
  const auto lora = LoraConfig::from(args);
  if (lora.enabled()) {
    if (ep.is_parallel()) {
      throw UsageError("--lora-rank with --expert-model-parallel-size " + std::to_string(ep.size) +
                       " is not supported yet: train the adapters with expert-parallel size 1");
    }
    check_lora_run(args, options, lora);
    t->actor_model->add_lora(lora, static_cast<uint64_t>(options.seed));
  }
  // LoRA: the reference model is the actor's base, its adapters off (no second copy).
  Model* reference = nullptr;
  if (lora.enabled() && options.needs_reference_model && !options.rollout_only) {
    reference = t->actor_model.get();
  } else if (options.needs_reference_model && !options.rollout_only) {
    if (auto ref = reference_source(models)) {
      t->ref_model = ckpt::load_model(*ref, models.dtype, device, tp);
      t->ref_model->set_requires_grad(false);
      t->ref_model->set_context_parallel(cp);
      if (t->ref_model->config().is_moe()) t->ref_model->set_expert_parallel(ep);
      reference = t->ref_model.get();
    }
  }
  t->actor = std::make_unique<train::Actor>(args, *t->actor_model, reference, *t->reducer);
  t->actor->set_timer(&t->timer);
  if (auto teacher = opd_teacher_source(models); teacher && !options.rollout_only) {
    t->teacher_model = ckpt::load_model(*teacher, models.dtype, device, tp);
    t->teacher_model->set_requires_grad(false);
    t->teacher_model->set_context_parallel(cp);
    if (t->teacher_model->config().is_moe()) t->teacher_model->set_expert_parallel(ep);
    t->actor->set_teacher_model(t->teacher_model.get());
  }
  t->resume = ckpt::load_for_training(args, *t->actor_model, t->actor->optimizer(),
                                      t->actor->lr_scheduler(), t->world);
  if (t->resume.is_loaded && t->reducer->rank() == 0)
    console << "vime train: weights from " << t->resume.from.string() << "\n";
  if (options.train_critic && !options.rollout_only) {
    // The critic trains in full (a checkpoint's adapter merged into its trunk).
    t->critic_trunk = ckpt::load_model(source, models.dtype, device, tp);
    t->critic_trunk->set_context_parallel(cp);
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
  save.base_model = t.base_model;
  ckpt::save_checkpoint(*options.save, *t.actor_model, &t.actor->optimizer(), state, save, t.world);
}

void offload_train_state(Trainer& t, bool offload) {
  auto apply = [offload](Optimizer& o) {
    if (offload && !o.is_offloaded()) o.offload();
    if (!offload && o.is_offloaded()) o.reload();
  };
  apply(t.actor->optimizer());
  if (t.critic) apply(t.critic->optimizer());
}

}  // namespace vime::loop
