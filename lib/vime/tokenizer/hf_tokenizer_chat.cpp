// HfTokenizer::apply_chat_template: the chat template beside the tokenizer files, loaded on first
// use.
#include <mutex>

#include "vime/error.hpp"
#include "vime/tokenizer/chat_template.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::tokenizer {

struct HfTokenizer::ChatTemplateSlot {
  std::once_flag once;
  std::optional<ChatTemplate> chat_template;
  std::string error;  // why there is none
};

std::shared_ptr<HfTokenizer::ChatTemplateSlot> HfTokenizer::new_chat_template_slot() {
  return std::make_shared<ChatTemplateSlot>();
}

const ChatTemplate& HfTokenizer::chat_template() const {
  std::call_once(chat_template_->once, [this] {
    if (parts_.directory.empty()) {
      chat_template_->error =
          "tokenizer: no chat template (the tokenizer was not loaded from a directory)";
      return;
    }
    try {
      chat_template_->chat_template.emplace(ChatTemplate::from_directory(parts_.directory));
    } catch (const Error& e) {
      chat_template_->error = e.what();
    }
  });
  if (!chat_template_->chat_template) throw Error(chat_template_->error);
  return *chat_template_->chat_template;
}

std::string HfTokenizer::apply_chat_template(const Json& messages, const Json& tools,
                                             bool add_generation_prompt, const Json& kwargs) const {
  return chat_template().render(messages, tools, add_generation_prompt, kwargs);
}

std::string HfTokenizer::apply_chat_template_json(std::string_view messages_json,
                                                  std::string_view tools_json,
                                                  bool add_generation_prompt,
                                                  std::string_view kwargs_json) const {
  return chat_template().render_json(messages_json, tools_json, add_generation_prompt, kwargs_json);
}

}  // namespace vime::tokenizer
