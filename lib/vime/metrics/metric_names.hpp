// slime's metric names (ray/rollout.py), in one place so logs stay comparable with slime runs.
#pragma once

namespace vime::metrics::names {

// Rollout manager, step key rollout/step.
inline constexpr const char* kRolloutPrefix = "rollout/";
inline constexpr const char* kResponseLenPrefix = "response_len/";     // + mean, median, max, min
inline constexpr const char* kZeroStdCountPrefix = "zero_std/count_";  // + str(round(r, 1))
inline constexpr const char* kRepetitionFrac = "repetition_frac";
inline constexpr const char* kTruncatedRatio = "truncated_ratio";
inline constexpr const char* kDynamicFilterDropPrefix = "rollout/dynamic_filter/drop_";  // + reason
inline constexpr const char* kRolloutStep = "rollout/step";

// pass@k: passrate/pass@{k} for rollouts, eval/{name}-pass@{k} for eval.
inline constexpr const char* kPassRatePrefix = "passrate/";
inline constexpr const char* kPassAtPrefix = "pass@";

// Eval: eval/{name}, eval/{name}-truncated_ratio, eval/{name}/response_len/*, eval/step.
inline constexpr const char* kEvalPrefix = "eval/";
inline constexpr const char* kEvalTruncatedSuffix = "-truncated_ratio";
inline constexpr const char* kEvalStep = "eval/step";

// Trainer, step key train/step (the critic logs train/critic-* on the same key).
inline constexpr const char* kTrainStep = "train/step";

}  // namespace vime::metrics::names
