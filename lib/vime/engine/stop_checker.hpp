// When a running request is done, checked after each sampled token, with vLLM v1's rules:
//   length: max_new_tokens reached, or the context is full (checked first: a request whose last
//           allowed token is EOS ends with "length", as in vLLM and SGLang);
//   stop:   EOS (unless ignore_eos) or a stop token id, once min_new_tokens tokens came before it;
//           or a stop string in the decoded text, once the text comes from tokens after the first
//           min_new_tokens (a stop string also overrides "length", as vLLM's detokenizer does).
// Stop strings are matched incrementally: each step searches only the new text and the
// (longest stop - 1) characters before it. Decoding is the caller's callback, so this needs no
// tokenizer (tokenizer::DecodeStream::step fits it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vime/engine/row_sampling.hpp"

namespace vime::engine {

enum class FinishReason { kNone, kStop, kLength };
const char* finish_reason_name(FinishReason reason);  // "", "stop", "length"

// The text one more output id adds, or nullopt when it adds none yet.
using TokenTextFn = std::function<std::optional<std::string>(int32_t token_id)>;

struct StopResult {
  FinishReason reason = FinishReason::kNone;
  std::optional<int32_t> stop_token;       // the EOS / stop id that ended the request
  std::optional<std::string> stop_string;  // the stop string that ended it
  bool done() const { return reason != FinishReason::kNone; }
};

class StopChecker {
 public:
  // max_total_tokens: the context length (prompt + output), 0 for none. `decode` is required when
  // the request has stop strings. keep_stop_string: slime's no_stop_trim (the output text keeps
  // the stop string).
  StopChecker(const RowSampling& sampling, int64_t prompt_tokens, int64_t max_total_tokens,
              TokenTextFn decode, bool keep_stop_string = true);

  // Records the sampled token and says whether the request is done. Not to be called after done.
  StopResult on_token(int32_t token_id);

  int64_t num_generated() const { return num_generated_; }
  // The decoded output (only kept when there are stop strings), cut after a matched stop string
  // (or before it without keep_stop_string). The ending EOS / stop id is not decoded.
  const std::string& text() const { return text_; }

 private:
  std::optional<std::string> find_stop_string(size_t new_text_begin);

  const RowSampling& sampling_;
  std::vector<int32_t> finishing_ids_;  // sorted
  int64_t prompt_tokens_, max_total_tokens_;
  TokenTextFn decode_;
  bool keep_stop_string_;
  size_t longest_stop_ = 0;
  int64_t num_generated_ = 0;
  std::string text_;
  bool done_ = false;
};

}  // namespace vime::engine
