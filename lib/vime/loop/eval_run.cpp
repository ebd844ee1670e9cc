#include "vime/loop/eval_run.hpp"

#include <ATen/ATen.h>

#include <cstdio>
#include <ostream>

#include "vime/core/atomic_file.hpp"
#include "vime/data/make_data_source.hpp"
#include "vime/engine/generation_config.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"
#include "vime/loop/eval_run_options.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/rollout/rollout_manager.hpp"
#include "vime/rollout/rollout_options.hpp"

namespace vime::loop {
namespace {

// `vime eval` has eval datasets only; a rollout function that asks for training prompts is told so.
class NoTrainPrompts final : public DataSource {
 public:
  std::vector<SampleGroup> get_samples(int64_t) override {
    throw UsageError("an eval run has no training prompts (--prompt-data); use vime train");
  }
  void add_samples(std::vector<SampleGroup>) override {}
  void save(int64_t) override {}
  void load(std::optional<int64_t>) override {}
  int64_t size() const override { return 0; }
};

}  // namespace

std::string eval_results_jsonl(const Args& args, const RolloutFnEvalOutput& output) {
  (void)args;
  std::string out;
  for (const auto& [name, result] : output.data) {
    for (size_t i = 0; i < result.samples.size(); ++i) {
      const auto& s = result.samples[i];
      Json line = Json::object();
      line["dataset"] = name;
      if (s.index) line["index"] = *s.index;
      if (s.group_index) line["group_index"] = *s.group_index;
      line["prompt"] = s.prompt;
      line["response"] = s.response;
      line["label"] = s.label;
      line["reward"] = i < result.rewards.size() ? Json(result.rewards[i]) : Json(nullptr);
      line["raw_reward"] = s.reward;
      line["status"] = to_string(s.status);
      line["response_length"] = s.response_length;
      line["truncated"] = i < result.truncated.size() ? result.truncated[i] : 0;
      out += line.dump() + "\n";
    }
  }
  return out;
}

int run_evaluation(const Args& given_args, std::ostream& console) {
  const Args args = with_run_defaults(given_args);
  const auto options = EvalRunOptions::from(args);
  const auto models = RunModelsOptions::from(args);
  const auto device = run_device();
  at::manual_seed(static_cast<uint64_t>(options.seed));
  auto tokenizer = load_run_tokenizer(models);
  const auto source = actor_source(models);
  auto model = ckpt::load_model(source, models.dtype, device);
  model->set_requires_grad(false);
  const int threads = set_cpu_threads(model->config(), device);
  console << "vime eval: " << source.dir.string() << " on "
          << (device.is_cuda() ? std::string("CUDA") : "CPU (" + threads_text(threads) + ")")
          << "\n";
  engine::NativeEngine engine(*model, tokenizer.get(), engine_options(args));
  NoTrainPrompts no_prompts;
  Args rollout_args = args;  // the embedded engine: seeds per sample, so an eval repeats exactly
  rollout_args.set(rollout::kSeedEachSampleArg, Json(true), ArgSource::kDerived);
  rollout::RolloutManager manager(rollout_args, engine, *tokenizer, no_prompts);
  auto result = manager.eval(0);
  auto logger = metrics::make_metrics_logger(args, &console);
  if (!result.metrics.empty()) logger->log("eval/step", 0, result.metrics);
  if (options.output) {
    write_text_file_atomic(*options.output, eval_results_jsonl(args, result.output));
    console << "vime eval: per-sample results in " << *options.output << "\n";
  }
  return 0;
}

}  // namespace vime::loop
