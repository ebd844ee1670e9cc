// vime's default train rollout (slime's sglang_rollout.generate_rollout_async): keeps
// --over-sampling-batch-size prompt groups in flight until --rollout-batch-size groups pass the
// dynamic filter, aborts the rest (back to the buffer under --partial-rollout), sorts by index and
// runs --rollout-sample-filter-path and --rollout-all-samples-process-path.
#pragma once

#include <cstdint>

#include "vime/args.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/rollout/dynamic_filter.hpp"
#include "vime/rollout/group_generator.hpp"
#include "vime/rollout/rollout_options.hpp"

namespace vime::rollout {

class DefaultRollout {
 public:
  // Loads the dynamic filter, sample filter and all-samples plugins now; `args` goes to them.
  DefaultRollout(const Args& args, const RolloutOptions& options, GroupGenerator& generator);

  // Groups sorted by the index of their first sample; metrics hold the
  // rollout/dynamic_filter/drop_{reason} counts.
  RolloutFnTrainOutput generate(int64_t rollout_id, DataSource& data_source);

 private:
  const Args& args_;
  const RolloutOptions& options_;
  GroupGenerator& generator_;
  DynamicFilter dynamic_filter_;
  plugin::PluginFunction<PluginKind::kSampleFilter> sample_filter_;
  plugin::PluginFunction<PluginKind::kAllSamplesProcess> all_samples_process_;
};

}  // namespace vime::rollout
