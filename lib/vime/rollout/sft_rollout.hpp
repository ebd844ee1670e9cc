// The built-in SFT rollout (slime.rollout.sft_rollout.generate_rollout; --rollout-function-path
// sft or that dotted name): no generation, the data becomes tokens and a loss mask.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "vime/rollout_types.hpp"
#include "vime/tokenizer.hpp"

namespace vime::rollout {

// True for "sft" and "slime.rollout.sft_rollout.generate_rollout".
bool is_sft_rollout_name(std::string_view name);

struct SftTokens {
  std::vector<int32_t> tokens;
  std::vector<int32_t> loss_mask;  // [tokens.size()]: 1 on assistant turns
};
// slime's MultiTurnLossMaskGenerator: each message rendered alone (the first before a dummy user
// turn, the rest after it, the dummy's text cut away) and tokenized; assistant messages are
// trained on except their role header (what add_generation_prompt renders). Throws vime::Error
// when the chat template does not render a message as such a prefix/suffix.
SftTokens sft_chat_tokens(const Tokenizer& tokenizer, const Json& messages, const Json& tools);

// Takes `num_groups` (--rollout-batch-size) groups from the data source. A message-list prompt goes
// through sft_chat_tokens; a string prompt with a string label becomes prompt + label + EOS with
// the mask on label + EOS. response_length runs from the first trained token to the end, loss_mask
// is its tail, reward 0, status COMPLETED.
RolloutFnTrainOutput sft_rollout(const Tokenizer& tokenizer, DataSource& data_source,
                                 int64_t num_groups);
// One sample as above (for tests and plugins).
void make_sft_sample(const Tokenizer& tokenizer, Sample& sample);

}  // namespace vime::rollout
