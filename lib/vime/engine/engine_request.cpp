#include "vime/engine/engine_request.hpp"

#include "vime/tokenizer/decode_stream.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::engine {
namespace {

class HfTextStream final : public TextStream {
 public:
  HfTextStream(const tokenizer::HfTokenizer& tokenizer, bool skip_special_tokens)
      : stream_(tokenizer, skip_special_tokens) {}
  std::optional<std::string> step(int32_t id) override { return stream_.step(id); }

 private:
  tokenizer::DecodeStream stream_;
};

// HF's DecodeStream over any Tokenizer: decode from a prefix offset and emit what the newest ids
// add once it no longer ends in an incomplete character (U+FFFD).
class GenericTextStream final : public TextStream {
 public:
  GenericTextStream(const Tokenizer& tokenizer, bool skip_special_tokens)
      : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}
  std::optional<std::string> step(int32_t id) override {
    ids_.push_back(id);
    std::span<const int32_t> all(ids_);
    const std::string prefix =
        tokenizer_.decode(all.subspan(prefix_, read_ - prefix_), skip_special_tokens_);
    const std::string full = tokenizer_.decode(all.subspan(prefix_), skip_special_tokens_);
    if (full.size() <= prefix.size() || full.ends_with("\xEF\xBF\xBD")) return std::nullopt;
    prefix_ = read_;
    read_ = ids_.size();
    return full.substr(prefix.size());
  }

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_tokens_;
  std::vector<int32_t> ids_;
  size_t prefix_ = 0, read_ = 0;
};

}  // namespace

std::unique_ptr<TextStream> TextStream::make(const Tokenizer& tokenizer, bool skip_special_tokens) {
  if (const auto* hf = dynamic_cast<const tokenizer::HfTokenizer*>(&tokenizer))
    return std::make_unique<HfTextStream>(*hf, skip_special_tokens);
  return std::make_unique<GenericTextStream>(tokenizer, skip_special_tokens);
}

std::vector<int64_t> EngineRequest::tokens() const {
  std::vector<int64_t> out(prompt.begin(), prompt.end());
  out.insert(out.end(), output_ids.begin(), output_ids.end());
  return out;
}

}  // namespace vime::engine
