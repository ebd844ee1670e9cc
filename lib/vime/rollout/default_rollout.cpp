#include "vime/rollout/default_rollout.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "vime/metrics/progress_bar.hpp"
#include "vime/rollout/default_generate.hpp"

namespace vime::rollout {
namespace {

// Finished groups, handed from the worker threads to the rollout thread.
class DoneQueue {
 public:
  void push(SampleGroup group) {
    {
      std::lock_guard lock(mutex_);
      groups_.push_back(std::move(group));
    }
    ready_.notify_one();
  }
  SampleGroup pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return !groups_.empty(); });
    SampleGroup group = std::move(groups_.front());
    groups_.pop_front();
    return group;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<SampleGroup> groups_;
};

int64_t first_index(const SampleGroup& group) {
  return group.empty() ? -1 : group.front().index.value_or(-1);
}

}  // namespace

DefaultRollout::DefaultRollout(const Args& args, const RolloutOptions& options,
                               GroupGenerator& generator)
    : args_(args),
      options_(options),
      generator_(generator),
      dynamic_filter_(load_dynamic_filter(args, options)) {
  if (const auto& spec = options.sample_filter_path)
    sample_filter_ = plugin::load_plugin<PluginKind::kSampleFilter>(
        *spec, "--rollout-sample-filter-path", "sample_filter");
  if (const auto& spec = options.all_samples_process_path)
    all_samples_process_ = plugin::load_plugin<PluginKind::kAllSamplesProcess>(
        *spec, "--rollout-all-samples-process-path", "all_samples_process");
}

RolloutFnTrainOutput DefaultRollout::generate(int64_t rollout_id, DataSource& data_source) {
  const int64_t target = options_.batch_size();
  const int64_t over_sampling = options_.over_sampling_batch_size.value_or(target);
  const SamplingParams params = rollout_sampling_params(options_);
  const int64_t n = options_.n_samples_per_prompt;
  auto progress =
      metrics::console_progress("rollout " + std::to_string(rollout_id), "samples", target * n);

  generator_.clear_abort();
  DoneQueue done;
  DynamicFilterMetrics drops;
  std::vector<SampleGroup> kept, dropped;
  int64_t remaining = 0;  // groups in flight or kept (slime's remaining_batch_size)
  int64_t in_flight = 0;
  // RolloutManager::abort() from another thread stops the loop: no new groups, what is in flight
  // comes back aborted and is kept as it is.
  try {
    while (static_cast<int64_t>(kept.size()) < target &&
           !(generator_.aborted() && in_flight == 0)) {
      while (remaining < target && !generator_.aborted()) {
        std::vector<SampleGroup> groups = data_source.get_samples(over_sampling);
        if (groups.empty())
          throw Error("the data source returned no prompts for rollout " +
                      std::to_string(rollout_id));
        for (SampleGroup& group : groups) {
          generator_.submit(std::move(group), params, false, rollout_id,
                            [&done](SampleGroup g) { done.push(std::move(g)); });
          ++remaining;
          ++in_flight;
        }
      }
      SampleGroup group = done.pop();
      --in_flight;
      // A group with a failed sample passes whatever the filter says: the run stops on it
      // (failed_samples.hpp) instead of sampling on, unseen, for groups the filter keeps.
      const bool failed = std::any_of(group.begin(), group.end(), [](const Sample& s) {
        return s.status == SampleStatus::kFailed;
      });
      if (dynamic_filter_ && !failed) {
        const DynamicFilterOutput verdict = dynamic_filter_(group);
        if (should_drop_group(verdict, remaining, target)) {
          --remaining;
          drops.on_drop(verdict.reason);
          dropped.push_back(std::move(group));
          continue;
        }
      }
      progress->advance(static_cast<int64_t>(group.size()));
      kept.push_back(std::move(group));
    }
  } catch (...) {
    // A throwing filter or data source: the workers still hold `done`; let them finish first.
    generator_.abort();
    for (; in_flight > 0; --in_flight) done.pop();
    generator_.clear_abort();
    throw;
  }
  progress->finish();

  // Target reached: end what is still running and collect it.
  std::vector<SampleGroup> aborted;
  if (in_flight > 0) generator_.abort();
  for (; in_flight > 0; --in_flight) aborted.push_back(done.pop());
  generator_.clear_abort();
  if (options_.partial_rollout && !aborted.empty()) {
    for (SampleGroup& group : aborted)
      for (Sample& s : group)
        if (!s.response.empty() && !s.metadata.contains("start_rollout_id"))
          s.metadata["start_rollout_id"] = rollout_id;
    data_source.add_samples(std::move(aborted));
  }

  // Kept groups hold aborted samples only after an external abort(): nothing to grade or train.
  for (SampleGroup& group : kept)
    for (Sample& s : group)
      if (s.status == SampleStatus::kAborted && s.reward.is_null()) {
        s.reward = 0.0;
        s.remove_sample = true;
      }

  auto by_index = [](const SampleGroup& a, const SampleGroup& b) {
    return first_index(a) < first_index(b);
  };
  std::stable_sort(kept.begin(), kept.end(), by_index);
  if (sample_filter_) sample_filter_(args_, kept);
  if (all_samples_process_) {
    // Kept and dropped groups alike; kept ones go back to the caller with the hook's changes.
    std::vector<SampleGroup> all_groups = std::move(kept);
    const size_t num_kept = all_groups.size();
    for (SampleGroup& group : dropped) all_groups.push_back(std::move(group));
    all_samples_process_(args_, all_groups, data_source);
    all_groups.resize(num_kept);
    kept = std::move(all_groups);
  }
  return {std::move(kept), drops.metrics()};
}

}  // namespace vime::rollout
