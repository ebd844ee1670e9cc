// Data: the prompt dataset and its keys, run length, the data source, batch sizes and dynamic
// batching. slime: utils/arguments.py, utils/data.py, rollout/data_source.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--prompt-data", kString, nullptr,
     "Prompt dataset: .jsonl or .parquet, optionally with a Python-style row slice suffix "
     "@[a:b]."},
    {"--input-key", kString, "input", "Dataset field holding the prompt."},
    {"--label-key", kString, nullptr, "Dataset field holding the label given to the reward."},
    {"--metadata-key", kString, "metadata", "Dataset field holding per-sample metadata."},
    {"--tool-key", kString, "tools",
     "Dataset field holding tool definitions passed to the chat template."},
    {"--multimodal-keys", kJson, nullptr,
     "JSON map from media type to dataset field, e.g. {\"image\": \"image_file\"}.", kNotYet},
    {"--apply-chat-template", kStoreTrue, nullptr,
     "Render prompts with the tokenizer's chat template (a plain string becomes one user "
     "message)."},
    {"--apply-chat-template-kwargs", kJson, "{}",
     "JSON object of extra variables for the chat template, e.g. {\"enable_thinking\": false}."},
    {"--num-rollout", kInt, nullptr,
     "Rollouts (train iterations) to run; wins over --num-epoch. One of the two is required."},
    {"--num-epoch", kInt, nullptr,
     "Passes over --prompt-data; sets --num-rollout to epochs x dataset size / "
     "--rollout-batch-size."},
    {"--disable-rollout-global-dataset",
     kStoreFalse,
     nullptr,
     "Do not load --prompt-data into the data source; a custom rollout function supplies "
     "prompts.",
     kYes,
     {},
     "rollout_global_dataset"},
    {"--data-source-path",
     kString,
     nullptr,
     "Plugin: path/to/lib.so[:symbol]. Data source that hands out prompt groups, takes back "
     "unfinished ones and saves its position (unset: the built-in dataset with buffer).",
     kYes,
     {},
     {},
     "--data-source-plugin"},
    {"--start-rollout-id", kInt, nullptr,
     "First rollout id (unset: the loaded checkpoint's iteration + 1, or 0)."},
    {"--rollout-batch-size", kInt, nullptr, "Prompts per rollout. Required."},
    {"--n-samples-per-prompt", kInt, "1", "Responses generated per prompt (the group size)."},
    {"--global-batch-size", kInt, nullptr,
     "Samples (responses) per optimizer step; --num-steps-per-rollout derives it."},
    {"--num-steps-per-rollout", kInt, nullptr,
     "Optimizer steps per rollout; sets --global-batch-size to rollout-batch-size x "
     "n-samples-per-prompt / steps."},
    {"--micro-batch-size", kInt, "1",
     "Samples per micro-batch (ignored with --use-dynamic-batch-size)."},
    {"--balance-data", kStoreTrue, nullptr,
     "Balance estimated work across data-parallel ranks (Karmarkar-Karp); a group's responses may "
     "land in different steps."},
    {"--balance-by-flops", kStoreTrue, nullptr,
     "Form micro-batches by estimated FLOPs. Not supported yet: --balance-data already assigns "
     "micro-batches to ranks by estimated FLOPs.",
     kNotYet},
    {"--use-dynamic-batch-size", kStoreTrue, nullptr,
     "Pack micro-batches up to --max-tokens-per-gpu tokens instead of a fixed sample count."},
    {"--max-tokens-per-gpu", kInt, nullptr,
     "Token budget per GPU and micro-batch for dynamic batching (about response length / CP "
     "size under context parallelism)."},
    {"--log-probs-max-tokens-per-gpu", kInt, nullptr,
     "Token budget per GPU for log-prob forward passes (unset: --max-tokens-per-gpu)."},
    {"--data-pad-size-multiplier", kInt, "128",
     "Pad packed training sequences to a multiple of this many tokens (Megatron's TP/CP alignment; "
     "vime packs without padding: same results).",
     kNoEffect},
    {"--loss-mask-type", kString, "qwen",
     "Chat format the SFT loss-mask generator follows. Only qwen (the default) is supported yet: "
     "vime masks every assistant turn of the chat template.",
     kNotYet, "qwen|qwen3|qwen3_5|distill_qwen"},
};
}  // namespace
FlagGroup data() { return {"data", "Data", kFlags}; }
}  // namespace vime::core::flags
