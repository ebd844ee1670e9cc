// Eval: eval datasets, schedule and the sampling overrides used for eval rollouts.
// slime: slime/utils/arguments.py, slime/utils/eval_config.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--eval-function-path",
     kString,
     nullptr,
     "Plugin: path/to/lib.so[:symbol]. Runs an eval rollout (unset: the rollout function).",
     kYes,
     {},
     {},
     "--eval-plugin"},
    {"--eval-interval", kInt, nullptr,
     "Evaluate every N rollouts (and at the end of each epoch); unset: never. Needs eval "
     "datasets."},
    {"--eval-prompt-data", kStringList, nullptr,
     "Eval datasets as name path pairs, e.g. aime /d/aime.jsonl gpqa /d/g.jsonl@[0:200] (one bare "
     "path means aime)."},
    {"--eval-config", kString, nullptr,
     "YAML of eval datasets and defaults (eval.defaults, eval.datasets); overrides "
     "--eval-prompt-data."},
    {"--skip-eval-before-train", kStoreTrue, nullptr,
     "Skip the eval at rollout 0, before any training."},
    {"--eval-input-key", kString, nullptr, "Prompt field of eval datasets (unset: --input-key)."},
    {"--eval-label-key", kString, nullptr, "Label field of eval datasets (unset: --label-key)."},
    {"--eval-tool-key", kString, nullptr, "Tools field of eval datasets (unset: --tool-key)."},
    {"--n-samples-per-eval-prompt", kInt, "1", "Responses generated per eval prompt."},
    {"--eval-temperature", kFloat, nullptr,
     "Sampling temperature for eval (unset: --rollout-temperature)."},
    {"--eval-top-p", kFloat, nullptr, "Top-p for eval (unset: --rollout-top-p)."},
    {"--eval-top-k", kInt, nullptr, "Top-k for eval (unset: --rollout-top-k)."},
    {"--eval-max-response-len", kInt, nullptr,
     "Most tokens generated per eval response (unset: --rollout-max-response-len)."},
    {"--eval-max-prompt-len", kInt, nullptr,
     "Longest eval prompt in tokens; longer ones are dropped (unset: --rollout-max-prompt-len)."},
    {"--eval-min-new-tokens", kInt, nullptr,
     "Fewest tokens generated per eval response (unset: no minimum)."},
    {"--eval-max-context-len", kInt, nullptr,
     "Context limit for eval, in tokens. Not supported yet: eval requests share the engine's "
     "--rollout-max-context-len; use --eval-max-response-len.",
     kNotYet},
    {"--dataset", kStringList, nullptr,
     "Eval benchmark presets by name (math: MATH-500, gsm8k: GSM8K test, aime: AIME 2024, gpqa: "
     "GPQA): reward type, keys, prompt template, and slime's samples per prompt (aime 16, gpqa 2, "
     "else 1) and response length (16384) unless the flags set them; the file comes from "
     "--dataset-path or $VIME_DATA."},
    {"--dataset-path", kStringList, nullptr,
     "Files of the --dataset presets, one per name, or one directory holding their files "
     "(math500.jsonl, gsm8k_test.jsonl, aime-2024.jsonl, gpqa_eval.jsonl)."},
    {"--eval-reward-key", kString, nullptr,
     "Key of the reward value when the eval reward returns a dict (unset: --reward-key)."},
    {"--eval-output", kString, nullptr,
     "vime eval: write one JSON line per eval sample (dataset, prompt, response, label, reward, "
     "status) to this file."},
};
}  // namespace
FlagGroup eval() { return {"eval", "Eval", kFlags}; }
}  // namespace vime::core::flags
