// slime's generate_and_rm / generate_and_rm_group: generate (default or --custom-generate-function-
// path / sample.generate_function_path), the --rollout-sample-hook-path hooks, then the reward
// (skipped when generate set one; once per group under --group-rm). Each sample is one task on the
// worker pool, whose size is the concurrency cap (--vllm-server-concurrency x engines).
//
// Failures: slime lets an exception escape the asyncio task and the whole rollout dies; its
// plugins catch errors themselves and mark the sample FAILED with metadata["error"]. vime does the
// latter for every sample: a throwing generate, hook or reward model gives status FAILED,
// metadata["error"] (the message) and ["error_cat"] (generate | sample_hook | reward),
// reward 0.0 and remove_sample, so the sample is reported and never trained on.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/engine_client.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/reward/reward_dispatch.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/rollout/worker_pool.hpp"
#include "vime/tokenizer.hpp"

namespace vime::rollout {

// --vllm-server-concurrency x max(1, --rollout-num-gpus / --rollout-num-gpus-per-engine).
int64_t concurrency_cap(const RolloutOptions& options);

class GroupGenerator {
 public:
  // Loads --custom-generate-function-path, the sample hooks and the reward plugins now, so a bad
  // plugin fails before any request. At most `max_threads` workers however high the cap is.
  // `args` goes to the plugins (generate, sample hooks, reward).
  GroupGenerator(const Args& args, const RolloutOptions& options, EngineClient& engine,
                 const Tokenizer& tokenizer, size_t max_threads = 256);
  ~GroupGenerator();

  using GroupDone = std::function<void(SampleGroup group)>;
  // Queues every sample of `group`; `on_done` runs on a worker thread once all are finished
  // (after the group reward).
  void submit(SampleGroup group, const SamplingParams& params, bool evaluation,
              std::optional<int64_t> rollout_id, GroupDone on_done);
  // submit() for each group, then waits; groups come back in the given order.
  std::vector<SampleGroup> run(std::vector<SampleGroup> groups, const SamplingParams& params,
                               bool evaluation, std::optional<int64_t> rollout_id);

  // Samples not yet started come back ABORTED without a request; requests in flight are ended by
  // the engine's abort_all. clear_abort() before the next rollout.
  void abort();
  void clear_abort() { aborted_ = false; }
  bool aborted() const { return aborted_; }

 private:
  struct GroupState;
  void run_sample(const std::shared_ptr<GroupState>& state, size_t i);
  void generate_one(Sample& sample, const SamplingParams& params, bool evaluation,
                    std::optional<int64_t> rollout_id);
  plugin::PluginFunction<PluginKind::kGenerate> generate_plugin(const std::string& spec);

  const Args args_;
  const RolloutOptions options_;
  EngineClient& engine_;
  const Tokenizer& tokenizer_;
  reward::RewardDispatcher rewards_;
  std::vector<plugin::PluginFunction<PluginKind::kSampleHook>> sample_hooks_;
  std::mutex plugins_mutex_;
  std::map<std::string, plugin::PluginFunction<PluginKind::kGenerate>> generate_plugins_;
  std::atomic<bool> aborted_{false};
  std::unique_ptr<WorkerPool> pool_;  // last: its threads join before the members above go
};

// Marks `sample` FAILED with `error` in metadata (see the header comment).
void mark_failed(Sample& sample, const std::string& category, const std::string& error);

}  // namespace vime::rollout
