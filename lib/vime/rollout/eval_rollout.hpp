// vime's default eval rollout (slime's sglang_rollout.eval_rollout): every eval dataset
// with its own sampling parameters, reward model and generate function, all its groups at once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vime/eval/eval_dataset_config.hpp"
#include "vime/eval/eval_options.hpp"
#include "vime/rollout/group_generator.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/tokenizer.hpp"

namespace vime::rollout {

class EvalRunner {
 public:
  // The datasets are read on first use and kept. The options must outlive the runner.
  EvalRunner(const RolloutOptions& options, const eval::EvalOptions& eval_options,
             GroupGenerator& generator, const Tokenizer& tokenizer,
             std::vector<eval::EvalDatasetConfig> datasets);

  // One EvalDatasetResult per dataset, samples sorted by index.
  RolloutFnEvalOutput run(int64_t rollout_id);
  // n_samples_per_eval_prompt by dataset name (for pass@k).
  std::map<std::string, size_t> samples_per_prompt() const;

 private:
  const RolloutOptions& options_;
  const eval::EvalOptions& eval_options_;
  GroupGenerator& generator_;
  const Tokenizer& tokenizer_;
  std::vector<eval::EvalDatasetConfig> datasets_;
  std::map<std::string, std::vector<SampleGroup>> loaded_;
};

}  // namespace vime::rollout
