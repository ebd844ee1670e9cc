#include "vime/loop/controller.hpp"

#include <ATen/Parallel.h>

#include <chrono>
#include <sstream>
#include <string>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/core/crash_point.hpp"
#include "vime/data/make_data_source.hpp"
#include "vime/data/tokenizer_hooks.hpp"
#include "vime/error.hpp"
#include "vime/loop/periodic.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/loop/train_batch.hpp"
#include "vime/loop/trainer_schedule.hpp"
#include "vime/metrics/metric_steps.hpp"
#include "vime/rollout/rollout_options.hpp"

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

Controller::Controller(const Args& args, const TrainLoopOptions& options, const AsyncOptions& async,
                       const RunModelsOptions& models, const dist::ParallelGroups& groups,
                       Trainer& trainer, const Tokenizer& tokenizer, metrics::MetricsLogger& logger,
                       std::ostream& console)
    : args_(args),
      options_(options),
      models_(models),
      groups_(groups),
      trainer_(trainer),
      logger_(logger),
      console_(console),
      rollout_args_(args) {
  if (groups.world) channel_.emplace(*groups.world);
  data_source_ = data::make_data_source(args, data::chat_template_renderer(tokenizer),
                                        data::token_counter(tokenizer));
  start_rollout_id_ = options.start_rollout_id.value_or(
      trainer.resume.is_resumed ? trainer.resume.state.iteration + 1 : 0);
  if (start_rollout_id_ > 0) data_source_->load(start_rollout_id_ - 1);
  const int64_t prompts = data_source_->size();
  num_rollout_ = resolve_num_rollout(options, prompts);
  if (!options.num_rollout && prompts > 0)
    rollouts_per_epoch_ = prompts / rollout_batch_size(options);
  if (channel_) channel_->publish_range({start_rollout_id_, num_rollout_});

  backend_ = make_rollout_backend(args, *trainer.actor_model, &tokenizer, start_rollout_id_,
                                  console, groups.world);
  // What the rollout side sees: args plus the engines the backend started, by model (slime's
  // args.sglang_model_routers), so plugins can reach a judge or teacher model of --vllm-config.
  if (Json urls = backend_->model_urls(); !urls.is_null())
    rollout_args_.set("vllm_model_urls", std::move(urls), ArgSource::kDerived);
  // The embedded backend has one engine per data-parallel group (per rank without tensor
  // parallelism): the rollout keeps that many engines busy.
  if (groups.world && !args.is_set("rollout_num_gpus") && backend_->model_urls().is_null()) {
    rollout_args_.set("rollout_num_gpus",
                      Json(static_cast<int64_t>(groups.world->size() / groups.tp_size)),
                      ArgSource::kDerived);
  }
  if (RolloutBackendOptions::from(args).kind == RolloutBackendKind::kNative)
    rollout_args_.set(rollout::kSeedEachSampleArg, Json(true), ArgSource::kDerived);
  if (async.mode == AsyncMode::kFully && !rollout_args_.is_set("rollout_function_path"))
    rollout_args_.set("rollout_function_path", Json("fully_async"), ArgSource::kDerived);
  manager_ = std::make_unique<rollout::RolloutManager>(rollout_args_, backend_->engine(), tokenizer,
                                                       *data_source_);
  // Generates in turn, one rollout ahead (--async) or all along (--fully-async).
  driver_ = std::make_unique<RolloutDriver>(async, *manager_, *backend_, num_rollout_);
  driver_->set_start_version(start_rollout_id_);
  metrics_ = std::make_unique<StepMetrics>(args, options, async.on(), logger, *driver_, *backend_);
}

Controller::~Controller() = default;

std::string Controller::describe() const {
  const Model& actor = *trainer_.actor_model;
  std::ostringstream out;
  out << "rollouts " << start_rollout_id_ << ".." << num_rollout_ - 1 << " on "
      << (actor.device().is_cuda() ? std::string("CUDA")
                                   : "CPU (" + threads_text(at::get_num_threads()) + ")")
      << ", " << c10::toString(models_.dtype);
  if (groups_.world) {
    const int tp = groups_.tp_size, cp = groups_.cp_size;
    out << ", " << groups_.world->size() / (tp * cp) << " data-parallel ranks";
    if (cp > 1) out << " x " << cp << " context-parallel";
    if (tp > 1) out << " x " << tp << " tensor-parallel";
  }
  out << "; generating with " << backend_->describe();
  return out.str();
}

rollout::TrainRollout Controller::generate(int64_t rollout_id) {
  const double step_start = now_s();
  trainer_.timer.reset();
  auto rollout = driver_->take(rollout_id);
  metrics_->generated(rollout_id, step_start, rollout);
  return rollout;
}

void Controller::skip_training(int64_t rollout_id) {
  if (channel_) channel_->publish({rollout_id, /*train=*/false, /*save=*/false, {}});
}

RolloutOrder Controller::order(int64_t rollout_id, const rollout::TrainRollout& rollout) {
  rollout_ = &rollout;
  auto converted = to_train_batch(rollout.data);
  if (converted.batch.size() == 0) {
    throw Error("rollout " + std::to_string(rollout_id) +
                " produced no sample with a response to train on");
  }
  const bool save = options_.save && should_run_periodic_action(rollout_id, options_.save_interval,
                                                                rollouts_per_epoch_, num_rollout_);
  RolloutOrder order{rollout_id, /*train=*/true, save, std::move(converted.batch)};
  if (channel_) channel_->publish(order);
  return order;
}

void Controller::training_starts() { metrics_->training_starts(); }

void Controller::trained(const RolloutOrder& order, bool actor_trained,
                         const train::Metrics& critic_metrics) {
  metrics_->trained(*rollout_, order.batch, *trainer_.actor, actor_trained, critic_metrics);
}

// The data source's position too (once the rollout in flight has taken its prompts), then the
// checkpoint with the other ranks, then --save-hf's HF copy.
void Controller::save(int64_t rollout_id) {
  driver_->settle();
  auto hold = manager_->lock_data_source();
  data_source_->save(rollout_id);
  crash_point("data_saved");
  save_checkpoint(trainer_, options_, rollout_id);
  console_ << "vime train: saved " << *options_.save << "/" << ckpt::iteration_dir_name(rollout_id)
           << "\n";
  if (auto hf = save_hf_copy(options_, rollout_id, *trainer_.actor_model, models_.hf_checkpoint))
    console_ << "vime train: saved HF copy " << hf->string() << "\n";
}

// Every rollout in turn; under --async every --update-weights-interval rollouts.
void Controller::update_weights(int64_t rollout_id) {
  if (!driver_->updates_weights_after(rollout_id)) return;
  driver_->settle();  // train_async.py: the rollout in flight finishes first (wait_rollout_time)
  {
    auto scope = trainer_.timer.scope("update_weights");
    driver_->update_weights(*trainer_.actor_model, rollout_id);
  }
  metrics_->weights_updated();
}

void Controller::log_step(const RolloutOrder& order) {
  metrics_->finish(trainer_.timer, order.batch);
  rollout_ = nullptr;
}

bool Controller::evaluates_after(int64_t rollout_id) const {
  return should_run_periodic_action(rollout_id, options_.eval_interval, rollouts_per_epoch_);
}

void Controller::eval(int64_t rollout_id) {
  driver_->settle();
  auto result = manager_->eval(rollout_id);
  if (!result.metrics.empty()) {
    logger_.log("eval/step", metrics::compute_rollout_step(args_, rollout_id), result.metrics);
  }
}

void Controller::finish() {
  if (channel_) channel_->finish();
}

}  // namespace vime::loop
