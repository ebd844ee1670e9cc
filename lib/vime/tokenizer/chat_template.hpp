// HF chat templates rendered as transformers' apply_chat_template(tokenize=False) renders them: a
// Jinja2 interpreter (lib/vime/tokenizer/jinja/) with transformers' environment (trim_blocks,
// lstrip_blocks, loopcontrols, tojson, raise_exception, strftime_now).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::tokenizer {

// A template that fails to parse or raises while rendering; the message names the template line.
class ChatTemplateError : public Error {
 public:
  using Error::Error;
};

class ChatTemplate {
 public:
  // The template of an HF tokenizer directory: chat_template.jinja beside tokenizer_config.json,
  // else tokenizer_config.json's "chat_template" (a string, or a list of {"name", "template"} from
  // which `name` picks one; "default" when empty). Special tokens of the config (bos_token,
  // eos_token, ...) are in the render context as transformers puts them. Throws vime::Error naming
  // the file when there is none.
  static ChatTemplate from_directory(const std::filesystem::path& dir, std::string_view name = {});
  // A template from source; `special_tokens` is an object such as
  // {"bos_token": "<s>", "eos_token": "</s>"}.
  static ChatTemplate from_string(std::string source, const Json& special_tokens = Json::object());

  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ~ChatTemplate();

  // transformers' apply_chat_template(messages, tools=tools, tokenize=False,
  // add_generation_prompt=..., **kwargs): `tools` is null or a list; `kwargs` an object of extra
  // variables (enable_thinking, ...). Thread-safe. Throws ChatTemplateError.
  std::string render(const Json& messages, const Json& tools, bool add_generation_prompt,
                     const Json& kwargs) const;
  // The same with messages, tools and kwargs as JSON text ("null" for no tools, "{}" for no
  // kwargs). Objects keep their key order, as after Python's json.loads, so `tojson` prints tool
  // schemas and tool-call arguments exactly as transformers does; vime::Json sorts keys. Prefer
  // this for data read from files. Throws vime::Error for invalid JSON, ChatTemplateError for
  // template errors.
  std::string render_json(std::string_view messages, std::string_view tools,
                          bool add_generation_prompt, std::string_view kwargs) const;

 private:
  struct Impl;
  explicit ChatTemplate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::tokenizer
