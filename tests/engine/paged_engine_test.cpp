// The NativeEngine's paged KV cache on the tiny CPU model: a GRPO group prefills its prompt once
// (counted), requests with a common prefix share blocks, copy-on-write keeps every sample's output
// what it is alone, preemption under a tiny block budget and chunked prefill change no output,
// and /reset_prefix_cache's engine call forgets the prefixes.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <future>
#include <set>
#include <thread>

#include "engine/engine_fixtures.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"

using vime::GenerateRequest;
using vime::GenerateResponse;
using vime::engine::NativeEngine;
using vime::engine::NativeEngineOptions;
using vime::test::make_request;

namespace {

vime::Model& model() {
  static auto m = vime::test::tiny_engine_model(at::kFloat, at::kCPU);
  return *m;
}

std::vector<int32_t> tokens_of(const std::string& text) {
  return vime::test::real_tokenizer("qwen3").encode(text);
}

// A prompt of exactly `n` tokens.
std::vector<int32_t> prompt_of_length(size_t n) {
  auto t = tokens_of(
      "In the beginning the universe was created. This has made a lot of people very angry and "
      "been widely regarded as a bad move. Many were increasingly of the opinion that they'd all "
      "made a big mistake in coming down from the trees in the first place.");
  REQUIRE(t.size() >= n);
  t.resize(n);
  return t;
}

// top_k 5 keeps draws out of the flat tail, where fp32 rounding of another batch shape could move
// an inverse-CDF draw (see native_engine_test.cpp).
GenerateRequest sample(std::vector<int32_t> prompt, int64_t new_tokens, int64_t seed) {
  auto r = make_request(std::move(prompt), new_tokens, 0.9, seed);
  r.sampling_params.top_k = 5;
  return r;
}

// Submits all at once while paused, so they are scheduled together.
std::vector<GenerateResponse> run_together(NativeEngine& engine,
                                           const std::vector<GenerateRequest>& requests) {
  engine.pause();
  std::vector<std::future<GenerateResponse>> futures;
  for (const auto& r : requests) futures.push_back(engine.submit(r, {}));
  engine.resume();
  std::vector<GenerateResponse> out;
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

std::vector<std::vector<int32_t>> alone(const std::vector<GenerateRequest>& requests) {
  std::vector<std::vector<int32_t>> out;
  for (const auto& r : requests) {
    NativeEngine engine(model(), nullptr, {});
    out.push_back(engine.generate(r).output_ids);
  }
  return out;
}

}  // namespace

TEST_CASE("a GRPO group of 8 prefills its prompt once and samples as if alone", "[engine]") {
  for (size_t length : {size_t{40}, size_t{32}}) {  // ends inside a block / on a block boundary
    CAPTURE(length);
    const auto prompt = prompt_of_length(length);
    std::vector<GenerateRequest> group;
    for (int i = 0; i < 8; ++i) group.push_back(sample(prompt, 12, 500 + i));
    NativeEngineOptions options;
    options.kv_block_size = 16;
    NativeEngine engine(model(), nullptr, options);
    const auto results = run_together(engine, group);
    const auto stats = engine.stats();
    // The first sample prefills the prompt; the other 7 find it cached and compute only their
    // last prompt token (its logits give their first token) in a copy of the block holding it.
    const auto n = static_cast<int64_t>(length);
    CHECK(stats.prefill_tokens == n + 7);
    CHECK(stats.prefix_cached_tokens == 7 * (n - 1));
    CHECK(stats.kv_block_copies >= 7);
    int cold = 0;
    for (const auto& r : results) {
      cold += r.cached_tokens == 0;
      if (r.cached_tokens != 0) CHECK(r.cached_tokens == n - 1);
    }
    CHECK(cold == 1);
    const auto expected = alone(group);
    for (size_t i = 0; i < group.size(); ++i) {
      CAPTURE(i);
      CHECK(results[i].output_ids == expected[i]);
    }
    // The samples share the prompt's cache, not their draws (their own seeds).
    std::set<std::vector<int32_t>> distinct;
    for (const auto& r : results) distinct.insert(r.output_ids);
    CHECK(distinct.size() > 1);
  }
}

TEST_CASE("requests with a common prefix share its full blocks", "[engine]") {
  const auto base = prompt_of_length(40);
  auto a = base, b = base;
  a.resize(37);
  b.resize(35);
  b.push_back(tokens_of(" banana")[0]);
  NativeEngineOptions options;
  options.kv_block_size = 16;
  NativeEngine engine(model(), nullptr, options);
  const auto first = engine.generate(make_request(a, 4));
  CHECK(first.cached_tokens == 0);
  const auto second = engine.generate(make_request(b, 4));
  CHECK(second.cached_tokens == 32);  // two full blocks; the third differs at position 35
  CHECK(second.output_ids == vime::test::greedy_reference(model(), b, 4));
  const auto again = engine.generate(make_request(a, 4));
  CHECK(again.cached_tokens == 36);  // all of it (its partial block too) but the last token
  CHECK(again.output_ids == first.output_ids);
  engine.reset_prefix_cache();
  const auto after_reset = engine.generate(make_request(a, 4));
  CHECK(after_reset.cached_tokens == 0);
  CHECK(after_reset.output_ids == first.output_ids);
}

TEST_CASE("preemption under a tiny block budget gives the unconstrained outputs", "[engine]") {
  std::vector<GenerateRequest> requests;
  for (int i = 0; i < 4; ++i) {
    auto prompt = prompt_of_length(6 + 3 * i);
    requests.push_back(i % 2 ? sample(prompt, 40, 70 + i) : make_request(prompt, 40));
  }
  // The group shares nothing; a shared prefix under pressure is covered by the GRPO case below.
  const auto expected = alone(requests);
  NativeEngineOptions options;
  options.kv_block_size = 4;
  options.max_context_len = 64;  // 16 blocks: one request always fits
  options.kv_cache_blocks = 20;  // the four need up to 4 x 15 blocks
  NativeEngine engine(model(), nullptr, options);
  const auto results = run_together(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(i);
    CHECK(results[i].finish_reason == "length");
    CHECK(results[i].output_ids == expected[i]);
  }
  CHECK(engine.stats().preempted >= 1);
  CHECK(engine.stats().kv_blocks_total == 20);

  // A GRPO group under the same pressure: preempted samples give back shared blocks and find
  // them again.
  std::vector<GenerateRequest> group;
  for (int i = 0; i < 4; ++i) group.push_back(sample(prompt_of_length(10), 30, 900 + i));
  const auto group_expected = alone(group);
  const auto group_results = run_together(engine, group);
  for (size_t i = 0; i < group.size(); ++i) CHECK(group_results[i].output_ids == group_expected[i]);
}

TEST_CASE("a budget that cannot hold one context is refused", "[engine]") {
  NativeEngineOptions options;
  options.kv_block_size = 4;
  options.max_context_len = 64;
  options.kv_cache_blocks = 15;
  CHECK_THROWS_AS(NativeEngine(model(), nullptr, options), vime::UsageError);
}

TEST_CASE("chunked prefill gives the outputs of a whole prefill", "[engine]") {
  const auto prompt = prompt_of_length(45);
  std::vector<GenerateRequest> requests{make_request(prompt, 10),
                                        sample(prompt_of_length(30), 10, 3),
                                        make_request(prompt_of_length(7), 10)};
  const auto expected = alone(requests);
  NativeEngineOptions options;
  options.max_prefill_tokens = 8;  // prompts in chunks of <= 8 tokens, with the decode rows
  NativeEngine engine(model(), nullptr, options);
  const auto results = run_together(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(i);
    CHECK(results[i].output_ids == expected[i]);
  }
  CHECK(engine.stats().prefill_forwards >= 45 / 8);
  CHECK(results[0].output_ids == vime::test::greedy_reference(model(), prompt, 10));
}
