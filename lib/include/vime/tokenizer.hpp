// The tokenizer as plugins see it: encode, decode, chat templates. lib/vime/tokenizer implements
// it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vime/json.hpp"

namespace vime {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int32_t> encode(std::string_view text,
                                      bool add_special_tokens = false) const = 0;
  virtual std::string decode(std::span<const int32_t> ids,
                             bool skip_special_tokens = false) const = 0;
  // HF apply_chat_template(messages, tools, tokenize=False, add_generation_prompt, **kwargs).
  virtual std::string apply_chat_template(const Json& messages, const Json& tools,
                                          bool add_generation_prompt, const Json& kwargs) const = 0;
  virtual std::optional<int32_t> eos_token_id() const = 0;
  virtual std::optional<int32_t> pad_token_id() const = 0;
  virtual int64_t vocab_size() const = 0;
};

}  // namespace vime
