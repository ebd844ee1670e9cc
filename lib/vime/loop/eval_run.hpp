// `vime eval`: the eval rollout of `vime train` on its own: a checkpoint (--load) or an HF
// directory
// (--hf-checkpoint) generates on every eval dataset (--dataset presets, --eval-prompt-data,
// --eval-config), rewards are graded, and the eval metrics (eval/{name}, -truncated_ratio,
// response lengths, pass@k with --log-passrate) are printed and logged; --eval-output writes one
// JSON line per sample.
#pragma once

#include <iosfwd>

#include "vime/args.hpp"
#include "vime/rollout_types.hpp"

namespace vime::loop {

int run_evaluation(const Args& args, std::ostream& console);

// The --eval-output lines: one JSON object per sample, datasets in name order.
std::string eval_results_jsonl(const Args& args, const RolloutFnEvalOutput& output);

}  // namespace vime::loop
