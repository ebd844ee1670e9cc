#include "vime/data/tokenizer_hooks.hpp"

namespace vime::data {

PromptRenderer chat_template_renderer(const Tokenizer& tokenizer) {
  return [&tokenizer](const Json& messages, const Json& tools, const Json& template_kwargs) {
    return tokenizer.apply_chat_template(messages, tools, /*add_generation_prompt=*/true,
                                         template_kwargs);
  };
}

TokenCounter token_counter(const Tokenizer& tokenizer) {
  return [&tokenizer](std::string_view text) {
    return tokenizer.encode(text, /*add_special_tokens=*/false).size();
  };
}

}  // namespace vime::data
