#include "vime/rollout/group_generator.hpp"

#include <algorithm>
#include <condition_variable>

#include "vime/core/crash_point.hpp"
#include "vime/generate_context.hpp"
#include "vime/rollout/default_generate.hpp"

namespace vime::rollout {

struct GroupGenerator::GroupState {
  SampleGroup group;
  SamplingParams params;
  bool evaluation = false;
  std::optional<int64_t> rollout_id;
  GroupDone on_done;
  std::atomic<size_t> remaining{0};
};

namespace {

// Distinct streams per sample and per continuation (a partial rollout resumes with
// response_length > 0), non-negative as a vLLM seed must be.
int64_t per_sample_seed(int64_t rollout_seed, int64_t index, int64_t response_length) {
  uint64_t x = static_cast<uint64_t>(rollout_seed);
  for (uint64_t v : {static_cast<uint64_t>(index), static_cast<uint64_t>(response_length)}) {
    x ^= v + 0x9E3779B97F4A7C15ull + (x << 6) + (x >> 2);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
  }
  return static_cast<int64_t>(x >> 1);
}

}  // namespace

int64_t concurrency_cap(const RolloutOptions& options) {
  int64_t engines = 1;
  if (const auto& gpus = options.rollout_num_gpus; gpus && *gpus > 0) {
    const int64_t per_engine = std::max<int64_t>(options.rollout_num_gpus_per_engine, 1);
    engines = std::max<int64_t>(*gpus / per_engine, 1);
  }
  return std::max<int64_t>(options.vllm_server_concurrency, 1) * engines;
}

void mark_failed(Sample& sample, const std::string& category, const std::string& error) {
  sample.status = SampleStatus::kFailed;
  sample.metadata["error"] = error;
  sample.metadata["error_cat"] = category;
  sample.reward = 0.0;
  sample.remove_sample = true;
}

GroupGenerator::GroupGenerator(const Args& args, const RolloutOptions& options,
                               EngineClient& engine, const Tokenizer& tokenizer, size_t max_threads)
    : args_(args), options_(options), engine_(engine), tokenizer_(tokenizer), rewards_(args) {
  if (options_.custom_generate_function_path)
    generate_plugin(*options_.custom_generate_function_path);
  for (const std::string& spec : options_.sample_hook_paths)
    sample_hooks_.push_back(plugin::load_plugin<PluginKind::kSampleHook>(
        spec, "--rollout-sample-hook-path", "sample_hook"));
  const auto cap = static_cast<size_t>(concurrency_cap(options_));
  pool_ = std::make_unique<WorkerPool>(std::min(cap, max_threads));
}

GroupGenerator::~GroupGenerator() { pool_.reset(); }

plugin::PluginFunction<PluginKind::kGenerate> GroupGenerator::generate_plugin(
    const std::string& spec) {
  std::lock_guard lock(plugins_mutex_);
  auto it = generate_plugins_.find(spec);
  if (it == generate_plugins_.end())
    it = generate_plugins_
             .emplace(spec, plugin::load_plugin<PluginKind::kGenerate>(
                                spec, "--custom-generate-function-path", "generate"))
             .first;
  return it->second;
}

void GroupGenerator::generate_one(Sample& sample, const SamplingParams& params, bool evaluation,
                                  std::optional<int64_t> rollout_id) {
  GenerateContext ctx{args_, engine_, tokenizer_, evaluation, rollout_id};
  std::string spec = sample.generate_function_path;
  if (spec.empty()) spec = options_.custom_generate_function_path.value_or("");
  if (spec.empty()) {
    sample =
        default_generate(ctx, std::move(sample), params,
                         options_.partial_rollout && options_.mask_offpolicy_in_partial_rollout);
  } else {
    auto fn = generate_plugin(spec);
    sample = fn(ctx, std::move(sample), params);
  }
}

void GroupGenerator::run_sample(const std::shared_ptr<GroupState>& state, size_t i) {
  Sample& sample = state->group[i];
  const bool finished =
      sample.status == SampleStatus::kCompleted || sample.status == SampleStatus::kTruncated;
  if (sample.status == SampleStatus::kFailed) {  // a retry: forget the last failure
    sample.reward = Json();
    sample.remove_sample = false;
    if (sample.metadata.is_object()) {
      sample.metadata.as_object().erase("error");
      sample.metadata.as_object().erase("error_cat");
    }
  }
  if (!finished) {
    std::string stage = "generate";
    try {
      if (aborted_) {
        sample.status = SampleStatus::kAborted;
      } else {
        SamplingParams params = state->params;
        // slime's sampling_seed = rollout_seed + the sample's place in its group.
        if (options_.sampling_seed) {
          params.seed = *options_.sampling_seed + static_cast<int64_t>(i);
        } else if (options_.per_sample_seed && !params.seed && sample.index) {
          params.seed =
              per_sample_seed(*options_.per_sample_seed, *sample.index, sample.response_length);
        }
        generate_one(sample, params, state->evaluation, state->rollout_id);
        stage = "sample_hook";
        for (const auto& hook : sample_hooks_)
          if (auto replaced = hook(args_, sample, state->rollout_id, state->evaluation))
            sample = std::move(*replaced);
        stage = "reward";
        const bool group_rm = options_.group_rm && !state->evaluation;
        if (!group_rm && sample.reward.is_null() && sample.status != SampleStatus::kAborted &&
            sample.status != SampleStatus::kFailed)
          sample.reward = rewards_.reward(sample);
      }
    } catch (const std::exception& e) {
      mark_failed(sample, stage, e.what());
    }
  }
  crash_point("rollout_sample");
  if (--state->remaining != 0) return;
  if (options_.group_rm && !state->evaluation && !aborted_) {
    std::vector<size_t> todo;
    SampleGroup to_grade;
    for (size_t j = 0; j < state->group.size(); ++j) {
      const Sample& s = state->group[j];
      if (s.status == SampleStatus::kFailed || s.status == SampleStatus::kAborted) continue;
      todo.push_back(j);
      to_grade.push_back(s);
    }
    try {
      std::vector<Json> rewards =
          to_grade.empty() ? std::vector<Json>{} : rewards_.group_reward(to_grade);
      if (rewards.size() != todo.size())
        throw Error("--group-rm reward returned " + std::to_string(rewards.size()) +
                    " rewards for " + std::to_string(todo.size()) + " samples");
      for (size_t k = 0; k < todo.size(); ++k) state->group[todo[k]].reward = rewards[k];
    } catch (const std::exception& e) {
      for (size_t j : todo) mark_failed(state->group[j], "reward", e.what());
    }
  }
  state->on_done(std::move(state->group));
}

void GroupGenerator::submit(SampleGroup group, const SamplingParams& params, bool evaluation,
                            std::optional<int64_t> rollout_id, GroupDone on_done) {
  auto state = std::make_shared<GroupState>();
  state->group = std::move(group);
  state->params = params;
  state->evaluation = evaluation;
  state->rollout_id = rollout_id;
  state->on_done = std::move(on_done);
  state->remaining = state->group.size();
  if (state->group.empty()) {
    state->on_done({});
    return;
  }
  for (size_t i = 0; i < state->group.size(); ++i)
    pool_->submit([this, state, i] { run_sample(state, i); });
}

std::vector<SampleGroup> GroupGenerator::run(std::vector<SampleGroup> groups,
                                             const SamplingParams& params, bool evaluation,
                                             std::optional<int64_t> rollout_id) {
  std::vector<SampleGroup> out(groups.size());
  std::mutex mutex;
  std::condition_variable done;
  size_t remaining = groups.size();
  for (size_t g = 0; g < groups.size(); ++g) {
    submit(std::move(groups[g]), params, evaluation, rollout_id, [&, g](SampleGroup group) {
      std::lock_guard lock(mutex);
      out[g] = std::move(group);
      if (--remaining == 0) done.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  done.wait(lock, [&] { return remaining == 0; });
  return out;
}

void GroupGenerator::abort() {
  aborted_ = true;
  engine_.abort_all();
}

}  // namespace vime::rollout
