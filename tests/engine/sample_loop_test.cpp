// The sampler and the stop checker together, as the engine's decode loop uses them: a batch whose
// requests finish at different steps for different reasons and leave it, with real Qwen3 text.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <memory>

#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/engine/sampler.hpp"
#include "vime/engine/stop_checker.hpp"
#include "vime/tokenizer/decode_stream.hpp"

using namespace vime::engine;

TEST_CASE("a decode loop ends each request with its own finish reason", "[sampler]") {
  const auto& qwen = vime::test::real_tokenizer("qwen3");
  const int32_t eos = 151645;  // <|im_end|>
  const int64_t vocab = 151936;
  struct Request {
    std::vector<int32_t> script;  // the token the logits favour at each step
    RowSampling sampling;
    std::unique_ptr<vime::tokenizer::DecodeStream> stream;
    std::unique_ptr<StopChecker> checker;
    std::vector<int32_t> output;
    std::vector<float> log_probs;
    StopResult result;
  };
  std::vector<Request> requests(3);
  requests[0].script = qwen.encode("Sure.");
  requests[0].script.push_back(eos);
  requests[1].script = qwen.encode("one two three four five six seven");
  requests[1].sampling.max_new_tokens = 4;
  requests[2].script = qwen.encode("x = 3\nAnswer: 3\nmore");
  requests[2].sampling.stop = {"Answer: 3"};
  for (size_t i = 0; i < requests.size(); ++i) {
    Request& r = requests[i];
    r.sampling.eos_token_ids = {eos};
    r.sampling.seed = 100 + i;
    r.sampling.temperature = i == 1 ? 0.0 : 0.8;
    r.sampling.top_p = 0.95;
    r.stream = std::make_unique<vime::tokenizer::DecodeStream>(qwen);
    r.checker = std::make_unique<StopChecker>(
        r.sampling, 5, 0, [s = r.stream.get()](int32_t id) { return s->step(id); });
  }
  std::vector<size_t> running{0, 1, 2};
  for (int step = 0; !running.empty(); ++step) {
    REQUIRE(step < 32);
    auto logits = at::zeros({static_cast<int64_t>(running.size()), vocab}, at::kFloat);
    std::vector<SamplerRow> rows;
    for (size_t b = 0; b < running.size(); ++b) {
      Request& r = requests[running[b]];
      logits[b][r.script.at(r.output.size())] = 40.0f;  // ~all the mass after / 0.8
      rows.push_back({&r.sampling, static_cast<int64_t>(r.output.size())});
    }
    const SampledTokens sampled = sample_tokens(logits, rows);
    std::vector<size_t> still;
    for (size_t b = 0; b < running.size(); ++b) {
      Request& r = requests[running[b]];
      r.output.push_back(sampled.token_ids[b]);
      r.log_probs.push_back(sampled.log_probs[b]);
      r.result = r.checker->on_token(sampled.token_ids[b]);
      if (!r.result.done()) still.push_back(running[b]);
    }
    running = still;
  }
  CHECK(requests[0].output == requests[0].script);
  CHECK(requests[0].result.reason == FinishReason::kStop);
  CHECK(requests[0].result.stop_token == eos);
  CHECK(requests[1].output.size() == 4);
  CHECK(requests[1].result.reason == FinishReason::kLength);
  CHECK(requests[2].result.stop_string == "Answer: 3");
  CHECK(requests[2].checker->text() == "x = 3\nAnswer: 3");
  for (const Request& r : requests)
    for (float lp : r.log_probs) CHECK(lp == Approx(0.0).margin(1e-6));  // the favoured token
}
