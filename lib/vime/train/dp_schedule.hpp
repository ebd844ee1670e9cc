// slime's data-parallel schedule (slime/utils/dp_schedule.py): which samples form each
// optimizer step, how each step is cut into micro-batches, and which rank runs which micro-batch.
// No torch: it plans indices only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace vime::train {

using MicroBatch = std::vector<int64_t>;  // sample indices

struct StepPlan {
  std::vector<int64_t> samples;                   // every sample of the step
  std::vector<std::vector<MicroBatch>> per_rank;  // [rank][micro-batch]
  int64_t num_micro_batches = 0;                  // over all ranks
};

struct DpScheduleConfig {
  int64_t global_batch_size = 0;  // rollouts (sample groups) per optimizer step
  int64_t dp_size = 1;
  std::optional<int64_t> max_tokens_per_gpu;  // dynamic batching (first-fit) when set
  int64_t micro_batch_size = 1;               // static batching otherwise
  // --balance-data: micro-batches go to ranks by Karmarkar-Karp on their estimated FLOPs
  // (Σ coeff·L + L² over their samples) instead of round-robin.
  bool balance_data = false;
  double flops_linear_coeff = 0;
};

// sample_lengths: tokens per sample; rollout_ids: the rollout each sample belongs to (samples of
// one rollout stay in one step); empty = each sample is its own rollout. Rollouts that do not fill
// a last step are dropped, as in slime.
std::vector<StepPlan> plan_steps(const std::vector<int64_t>& sample_lengths,
                                 const std::vector<int64_t>& rollout_ids,
                                 const DpScheduleConfig& config);

// The rank that trains each sample under `plans`; samples no step trains on belong to rank 0
// (which computes their per-sample data as a single rank would).
std::vector<int> sample_owners(const std::vector<StepPlan>& plans, size_t num_samples);

// First-fit packing of `samples` into bins of at most `max_tokens` (an oversize sample gets a bin
// of its own).
std::vector<MicroBatch> first_fit(const std::vector<int64_t>& samples,
                                  const std::vector<int64_t>& sample_lengths, int64_t max_tokens);
// `samples` in order, cut into micro-batches of `micro_batch_size` (at least 1) samples.
std::vector<MicroBatch> fixed_size(const std::vector<int64_t>& samples, int64_t micro_batch_size);

}  // namespace vime::train
