#include "vime/tokenizer/decode_stream.hpp"

#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::tokenizer {

std::optional<std::string> DecodeStream::step(int32_t id) {
  ids_.push_back(id);
  // Decoding the previous token(s) with the new one lets decoders that look at neighbours
  // (byte-level characters, Metaspace's leading space) see the same context a full decode would.
  std::string text = tokenizer_.decode_text(ids_, skip_special_tokens_, false);
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  if (text.size() <= prefix_.size() || text.ends_with(kReplacement)) return std::nullopt;
  std::string added;
  if (text.starts_with(prefix_)) {
    added = text.substr(prefix_.size());
  } else {
    // A decoder rewrote earlier text (HF reports an error here); emit what follows the common part.
    size_t common = 0;
    while (common < prefix_.size() && prefix_[common] == text[common]) ++common;
    added = text.substr(common);
  }
  const size_t new_prefix_index = ids_.size() - prefix_index_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_index_));
  prefix_ = tokenizer_.decode_text(ids_, skip_special_tokens_, false);
  prefix_index_ = new_prefix_index;
  return added;
}

}  // namespace vime::tokenizer
