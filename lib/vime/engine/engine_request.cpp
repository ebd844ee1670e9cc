#include "vime/engine/engine_request.hpp"

#include <algorithm>

#include "vime/error.hpp"
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

void EngineRequest::finish(const char* reason, const std::string& version) {
  GenerateResponse response;
  response.output_ids = std::move(output_ids);
  if (return_logprob) response.output_log_probs = std::move(log_probs);
  if (top_out) top_out->positions = std::move(top);
  response.finish_reason = reason;
  response.weight_version = version;
  response.prompt_tokens = static_cast<int64_t>(prompt.size());
  response.cached_tokens = cached_tokens;
  if (return_routed_experts) {
    const auto positions = static_cast<int64_t>(prompt.size() + response.output_ids.size());
    const int64_t rows = std::min(routed_rows(), positions - 1);
    routed_experts.resize(static_cast<size_t>(rows * routed_width));
    response.routed_experts = std::move(routed_experts);
  }
  finished = true;
  promise.set_value(std::move(response));
}

void check_request(const GenerateRequest& request, const RequestLimits& limits) {
  const auto& ids = request.input_ids;
  const auto& params = request.sampling_params;
  if (ids.empty()) throw Error("generate: the prompt is empty (input_ids has no tokens)");
  if (static_cast<int64_t>(ids.size()) >= limits.max_context)
    throw Error("generate: the prompt has " + std::to_string(ids.size()) +
                " tokens but the engine's context holds " + std::to_string(limits.max_context) +
                " (prompt + output); shorten it or raise --rollout-max-context-len");
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= limits.vocab_size)
      throw Error("generate: input_ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                  " is outside the model's vocabulary (0.." +
                  std::to_string(limits.vocab_size - 1) + ")");
  if (params.repetition_penalty != 1.0)
    throw Error(
        "sampling_params.repetition_penalty is not supported by the native engine; "
        "leave it at 1");
  if (!params.stop.empty() && limits.tokenizer == nullptr)
    throw Error("sampling_params.stop needs a tokenizer; the engine was built without one");
}

std::unique_ptr<EngineRequest> make_engine_request(const GenerateRequest& request,
                                                   const RequestLimits& limits,
                                                   uint64_t fallback_seed) {
  const auto& ids = request.input_ids;
  const auto& params = request.sampling_params;
  auto r = std::make_unique<EngineRequest>();
  r->prompt = ids;
  r->sequence = ids;
  r->return_logprob = request.return_logprob;
  r->return_routed_experts = request.return_routed_experts;
  r->sampling = make_row_sampling(params, limits.eos, fallback_seed);
  TokenTextFn decode;
  if (!params.stop.empty()) {
    r->text = TextStream::make(*limits.tokenizer, params.skip_special_tokens);
    decode = [text = r->text.get()](int32_t id) { return text->step(id); };
  }
  r->checker =
      std::make_unique<StopChecker>(r->sampling, static_cast<int64_t>(ids.size()),
                                    limits.max_context, std::move(decode), params.no_stop_trim);
  return r;
}

}  // namespace vime::engine
