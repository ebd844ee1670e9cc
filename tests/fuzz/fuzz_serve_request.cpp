// `vime serve` request bodies: every input goes through the parsers of all three generation
// routes (/v1/completions: prompts and sampling fields; /v1/chat/completions: messages rendered by
// Qwen3's chat template and tokenized; /inference/v1/generate: token ids and sampling_params), as
// lib/vime/serve/*_routes.cpp call them. Each accepts the body or throws vime::Error (the server's
// 400); what it accepts is in range (token ids in the vocabulary, sampling fields validated).
#include <limits>
#include <memory>
#include <string>

#include "fuzz_harness.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/serve/request_body.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace {

constexpr int64_t kMaxModelLen = 4096;

const vime::Tokenizer& tokenizer() {
  static const auto t = [] {
    auto made = vime::tokenizer::HfTokenizer::from_directory(VIME_FUZZ_TOKENIZER_DIR);
    vime::serve::max_token_bytes(*made);  // once, as `vime serve` does at startup
    return made;
  }();
  return *t;
}

void check_ids(const std::vector<int32_t>& ids) {
  for (int32_t id : ids)
    if (id < 0 || id >= tokenizer().vocab_size()) __builtin_trap();  // an id outside the vocab
}

void check_params(const vime::SamplingParams& p) {
  if (p.max_new_tokens < 1 || p.min_new_tokens < 0 || p.min_new_tokens > p.max_new_tokens ||
      !(p.temperature >= 0) || !(p.top_p > 0 && p.top_p <= 1) || p.top_k < -1)
    __builtin_trap();  // accepted sampling fields the engine cannot take
}

template <class F>
void route(F parse) {
  try {
    parse();
  } catch (const vime::Error&) {  // answered 400 (the server's exception handler)
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tokenizer();  // loads Qwen3's tokenizer and its longest token once (seconds under ASan)
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vime::serve;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const vime::Tokenizer& tok = tokenizer();
  route([&] {  // /v1/completions
    const vime::Json body = parse_body(text);
    for (const auto& ids : completion_prompts(tok, kMaxModelLen, body)) check_ids(ids);
    check_params(params_of_choice(sampling_params_from(body), choices_per_prompt(body) - 1));
    (void)bool_field(body, "stream");
  });
  route([&] {  // /v1/chat/completions
    vime::Json body = parse_body(text);
    const auto prompt = chat_prompt(tok, kMaxModelLen, body);
    check_ids(prompt);
    (void)bool_field(body, "logprobs");
    body.as_object().erase("logprobs");
    check_params(sampling_params_from(body, kMaxModelLen - static_cast<int64_t>(prompt.size())));
  });
  route([&] {  // /inference/v1/generate
    const vime::Json body = parse_body(text);
    const vime::Json* ids = body.find("token_ids");
    if (!ids) throw BadRequest("token_ids is required");
    check_ids(token_ids_from(*ids, "token_ids", tok.vocab_size()));
    vime::Json fields = vime::Json::object();
    if (const vime::Json* sp = body.find("sampling_params"); sp && sp->is_object()) fields = *sp;
    check_params(sampling_params_from(fields));
    (void)choices_per_prompt(fields);
  });
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {"\"prompt\"",
          "\"messages\"",
          "\"role\"",
          "\"content\"",
          "\"user\"",
          "\"assistant\"",
          "\"system\"",
          "\"tool\"",
          "\"type\"",
          "\"text\"",
          "\"tools\"",
          "\"tool_calls\"",
          "\"chat_template_kwargs\"",
          "\"enable_thinking\"",
          "\"continue_final_message\"",
          "\"add_generation_prompt\"",
          "\"token_ids\"",
          "\"sampling_params\"",
          "\"max_tokens\"",
          "\"max_completion_tokens\"",
          "\"min_tokens\"",
          "\"temperature\"",
          "\"top_p\"",
          "\"top_k\"",
          "\"stop\"",
          "\"stop_token_ids\"",
          "\"seed\"",
          "\"n\"",
          "\"logprobs\"",
          "\"top_logprobs\"",
          "\"repetition_penalty\"",
          "\"add_special_tokens\"",
          "151643",
          "151936",
          "-1",
          "0",
          "1e400",
          "9223372036854775807",
          "-9223372036854775808",
          "true",
          "null",
          "[",
          "]",
          "{",
          "}",
          ",",
          ":",
          "\"<|im_start|>\"",
          "\"<think>\""};
}
