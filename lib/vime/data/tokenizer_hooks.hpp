// The PromptRenderer and TokenCounter of a run, taken from its vime::Tokenizer: the chat template
// for --apply-chat-template (with add_generation_prompt, as slime calls it) and
// encode(text, add_special_tokens=false) for the long-prompt filter.
#pragma once

#include "vime/data/prompt_dataset.hpp"
#include "vime/tokenizer.hpp"

namespace vime::data {

// Both hold a reference: `tokenizer` must outlive them (it lives for the whole run).
PromptRenderer chat_template_renderer(const Tokenizer& tokenizer);
TokenCounter token_counter(const Tokenizer& tokenizer);

}  // namespace vime::data
