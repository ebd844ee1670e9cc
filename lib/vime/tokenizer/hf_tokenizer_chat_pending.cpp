// Stands in for hf_tokenizer_chat.cpp until the Jinja interpreter (branch `jinja`) is merged.
#include "vime/error.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::tokenizer {

struct HfTokenizer::ChatTemplateSlot {};

std::shared_ptr<HfTokenizer::ChatTemplateSlot> HfTokenizer::new_chat_template_slot() {
  return std::make_shared<ChatTemplateSlot>();
}


std::string HfTokenizer::apply_chat_template(const Json&, const Json&, bool, const Json&) const {
  throw Error("tokenizer: chat templates are not available in this build (the Jinja interpreter is "
              "missing)");
}

}  // namespace vime::tokenizer
