#include "vime/engine/stop_checker.hpp"

#include <algorithm>

#include "vime/error.hpp"

namespace vime::engine {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kNone:
      break;
  }
  return "";
}

StopChecker::StopChecker(const RowSampling& sampling, int64_t prompt_tokens,
                         int64_t max_total_tokens, TokenTextFn decode, bool keep_stop_string)
    : sampling_(sampling),
      finishing_ids_(sampling.finishing_token_ids()),
      prompt_tokens_(prompt_tokens),
      max_total_tokens_(max_total_tokens),
      decode_(std::move(decode)),
      keep_stop_string_(keep_stop_string) {
  for (const std::string& s : sampling_.stop) longest_stop_ = std::max(longest_stop_, s.size());
  if (longest_stop_ > 0 && !decode_)
    throw Error("StopChecker: the request has stop strings but no decode callback");
}

StopResult StopChecker::on_token(int32_t token_id) {
  if (done_) throw Error("StopChecker::on_token called after the request finished");
  ++num_generated_;
  const bool past_min = num_generated_ > sampling_.min_new_tokens;
  StopResult result;
  const bool token_stop =
      past_min && std::binary_search(finishing_ids_.begin(), finishing_ids_.end(), token_id);
  const bool length =
      (sampling_.max_new_tokens > 0 && num_generated_ >= sampling_.max_new_tokens) ||
      (max_total_tokens_ > 0 && prompt_tokens_ + num_generated_ >= max_total_tokens_);
  if (length) {
    result.reason = FinishReason::kLength;
  } else if (token_stop) {
    result.reason = FinishReason::kStop;
    result.stop_token = token_id;
  }
  if (longest_stop_ > 0 && !token_stop) {
    const size_t new_text_begin = text_.size();
    if (std::optional<std::string> piece = decode_(token_id)) text_ += *piece;
    if (past_min && text_.size() > new_text_begin) {
      if (auto stop = find_stop_string(new_text_begin)) {
        result.reason = FinishReason::kStop;
        result.stop_token.reset();
        result.stop_string = std::move(stop);
      }
    }
  }
  done_ = result.done();
  return result;
}

std::optional<std::string> StopChecker::find_stop_string(size_t new_text_begin) {
  // A match must end in the new text, so it starts at most (length - 1) characters before it (text
  // from within min_new_tokens can only be the head of a match, as in vLLM).
  size_t best = std::string::npos;
  const std::string* best_stop = nullptr;
  for (const std::string& stop : sampling_.stop) {
    const size_t from = new_text_begin - std::min(new_text_begin, stop.size() - 1);
    const size_t at = text_.find(stop, from);
    if (at != std::string::npos && at < best) {
      best = at;
      best_stop = &stop;
    }
  }
  if (best_stop == nullptr) return std::nullopt;
  text_.resize(keep_stop_string_ ? best + best_stop->size() : best);
  return *best_stop;
}

}  // namespace vime::engine
