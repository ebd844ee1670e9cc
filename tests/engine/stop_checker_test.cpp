// Stop conditions and finish reasons, stop strings streamed through the real Qwen3 tokenizer, and
// the validation of a request's sampling params.
#include "vime/engine/stop_checker.hpp"

#include <catch2/catch.hpp>

#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/engine/row_sampling.hpp"
#include "vime/error.hpp"
#include "vime/tokenizer/decode_stream.hpp"

using namespace vime::engine;

namespace {

RowSampling with_eos(int64_t max_new_tokens, std::vector<int32_t> stop_ids = {}) {
  RowSampling s;
  s.eos_token_ids = {0};
  s.stop_token_ids = std::move(stop_ids);
  s.max_new_tokens = max_new_tokens;
  return s;
}

// Feeds `tokens` until the checker says done; returns the result and how many tokens it took.
std::pair<StopResult, size_t> run(StopChecker& checker, const std::vector<int32_t>& tokens) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    StopResult r = checker.on_token(tokens[i]);
    if (r.done()) return {r, i + 1};
  }
  return {StopResult{}, tokens.size()};
}

}  // namespace

TEST_CASE("max_new_tokens and the context length end a request with length", "[sampler]") {
  const RowSampling s = with_eos(4);
  StopChecker checker(s, /*prompt_tokens=*/10, /*max_total_tokens=*/0, nullptr);
  auto [r, n] = run(checker, {5, 6, 7, 8, 9});
  CHECK(n == 4);
  CHECK(r.reason == FinishReason::kLength);
  CHECK(std::string(finish_reason_name(r.reason)) == "length");
  CHECK_THROWS_AS(checker.on_token(1), vime::Error);  // done is done

  const RowSampling unlimited = with_eos(0);
  StopChecker context(unlimited, 10, /*max_total_tokens=*/13, nullptr);
  std::tie(r, n) = run(context, {5, 6, 7, 8});
  CHECK(n == 3);
  CHECK(r.reason == FinishReason::kLength);
}

TEST_CASE("EOS and stop token ids end a request with stop", "[sampler]") {
  const RowSampling s = with_eos(10, {42, 43});
  for (int32_t finisher : {0, 42, 43}) {
    StopChecker checker(s, 3, 0, nullptr);
    auto [r, n] = run(checker, {5, 6, finisher, 7});
    CHECK(n == 3);
    CHECK(r.reason == FinishReason::kStop);
    CHECK(std::string(finish_reason_name(r.reason)) == "stop");
    CHECK(r.stop_token == finisher);
  }
  RowSampling ignoring = s;
  ignoring.ignore_eos = true;
  StopChecker checker(ignoring, 3, 0, nullptr);
  auto [r, n] = run(checker, {0, 0, 43});
  CHECK(n == 3);
  CHECK(r.stop_token == 43);  // stop ids still count with ignore_eos
}

TEST_CASE("EOS on the last allowed token is length, as in vLLM and SGLang", "[sampler]") {
  const RowSampling s = with_eos(3);
  StopChecker checker(s, 3, 0, nullptr);
  auto [r, n] = run(checker, {5, 6, 0});
  CHECK(n == 3);
  CHECK(r.reason == FinishReason::kLength);
  CHECK_FALSE(r.stop_token.has_value());
}

TEST_CASE("min_new_tokens: finishing tokens count only after it", "[sampler]") {
  RowSampling s = with_eos(10, {42});
  s.min_new_tokens = 2;
  StopChecker checker(s, 3, 0, nullptr);
  auto [r, n] = run(checker, {0, 42, 0});  // the sampler masks them; if they come anyway, go on
  CHECK(n == 3);
  CHECK(r.stop_token == 0);
}

TEST_CASE("stop strings are found incrementally in the real tokenizer's streamed text",
          "[sampler]") {
  const auto& qwen = vime::test::real_tokenizer("qwen3");
  const std::string text = "The answer is 42.\n\nThen 7 more: 49.\n\nDone";
  const std::vector<int32_t> ids = qwen.encode(text);
  auto checker_for = [&](const RowSampling& s, vime::tokenizer::DecodeStream& stream,
                         bool keep = true) {
    return StopChecker(
        s, 0, 0, [&stream](int32_t id) { return stream.step(id); }, keep);
  };
  // How many tokens the text up to and including `needle`'s first occurrence after `from` takes.
  auto tokens_through = [&](const std::string& needle, size_t from = 0) {
    const size_t end = text.find(needle, from) + needle.size();
    for (size_t n = 1; n <= ids.size(); ++n)
      if (qwen.decode_text({ids.begin(), ids.begin() + n}, false, false).size() >= end) return n;
    return ids.size();
  };

  RowSampling s = with_eos(100);
  s.stop = {"\n\n"};
  {
    vime::tokenizer::DecodeStream stream(qwen);
    StopChecker checker = checker_for(s, stream);
    auto [r, n] = run(checker, ids);
    CHECK(r.reason == FinishReason::kStop);
    CHECK(r.stop_string == "\n\n");
    CHECK(n == tokens_through("\n\n"));
    CHECK(checker.text() == "The answer is 42.\n\n");  // slime's no_stop_trim keeps it
  }
  {
    vime::tokenizer::DecodeStream stream(qwen);
    StopChecker checker = checker_for(s, stream, /*keep=*/false);
    run(checker, ids);
    CHECK(checker.text() == "The answer is 42.");
  }
  {  // A stop string spread over several tokens, and the earliest of two stops wins.
    RowSampling spread = s;
    spread.stop = {"Done", "swer is 4"};
    vime::tokenizer::DecodeStream stream(qwen);
    StopChecker checker = checker_for(spread, stream);
    auto [r, n] = run(checker, ids);
    REQUIRE(tokens_through("swer is 4") > 2);  // it really spans tokens
    CHECK(n == tokens_through("swer is 4"));
    CHECK(r.stop_string == "swer is 4");
    CHECK(checker.text() == "The answer is 4");
  }
  {  // Within min_new_tokens a stop string does not count; the next occurrence does.
    RowSampling late = s;
    late.min_new_tokens = static_cast<int64_t>(tokens_through("\n\n"));
    vime::tokenizer::DecodeStream stream(qwen);
    StopChecker checker = checker_for(late, stream);
    auto [r, n] = run(checker, ids);
    CHECK(r.stop_string == "\n\n");
    CHECK(n == tokens_through("\n\n", text.find("\n\n") + 2));
    CHECK(checker.text() == "The answer is 42.\n\nThen 7 more: 49.\n\n");
  }
  {  // A stop string reached on the last allowed token is stop, not length (vLLM's detokenizer).
    RowSampling capped = s;
    capped.max_new_tokens = static_cast<int64_t>(tokens_through("\n\n"));
    vime::tokenizer::DecodeStream stream(qwen);
    StopChecker checker = checker_for(capped, stream);
    auto [r, n] = run(checker, ids);
    CHECK(n == tokens_through("\n\n"));
    CHECK(r.reason == FinishReason::kStop);
  }
  {  // Text that never contains the stop string runs to length.
    RowSampling absent = s;
    absent.stop = {"zebra"};
    absent.max_new_tokens = static_cast<int64_t>(ids.size());
    vime::tokenizer::DecodeStream stream(qwen);
    StopChecker checker = checker_for(absent, stream);
    auto [r, n] = run(checker, ids);
    CHECK(r.reason == FinishReason::kLength);
    CHECK(checker.text() == text);
  }
  CHECK_THROWS_WITH(StopChecker(s, 0, 0, nullptr), Catch::Contains("decode callback"));
}

TEST_CASE("make_row_sampling validates and resolves a request's SamplingParams", "[sampler]") {
  vime::SamplingParams p;
  p.temperature = 0.7;
  p.top_k = 20;
  p.top_p = 0.9;
  p.max_new_tokens = 16;
  p.min_new_tokens = 2;
  p.stop_token_ids = {7, 3};
  p.extra["min_p"] = 0.05;
  p.extra["ignore_eos"] = true;
  RowSampling s = make_row_sampling(p, {3, 151645}, /*fallback_seed=*/99);
  CHECK(s.seed == 99);
  CHECK(s.min_p == 0.05);
  CHECK(s.ignore_eos);
  CHECK(s.finishing_token_ids() == std::vector<int32_t>{3, 7});  // EOS ignored, stop id 3 stays
  s.ignore_eos = false;
  CHECK(s.finishing_token_ids() == std::vector<int32_t>{3, 7, 151645});
  p.seed = 5;
  CHECK(make_row_sampling(p, {}, 99).seed == 5);
  CHECK_FALSE(make_row_sampling(p, {}, 0).greedy());
  p.temperature = 0;
  CHECK(make_row_sampling(p, {}, 0).greedy());

  auto rejects = [](auto edit, const std::string& field) {
    vime::SamplingParams bad;
    edit(bad);
    CHECK_THROWS_WITH(make_row_sampling(bad, {}, 0), Catch::Contains("sampling_params." + field));
  };
  rejects([](auto& b) { b.temperature = -1; }, "temperature");
  rejects([](auto& b) { b.top_p = 0; }, "top_p");
  rejects([](auto& b) { b.top_p = 1.5; }, "top_p");
  rejects([](auto& b) { b.top_k = -2; }, "top_k");
  rejects([](auto& b) { b.extra["min_p"] = 2.0; }, "min_p");
  rejects([](auto& b) { b.extra["min_p"] = "high"; }, "min_p");
  rejects([](auto& b) { b.extra["ignore_eos"] = 1; }, "ignore_eos");
  rejects([](auto& b) { b.min_new_tokens = -1; }, "min_new_tokens");
  rejects([](auto& b) { b.max_new_tokens = 2, b.min_new_tokens = 3; }, "min_new_tokens");
  rejects([](auto& b) { b.stop = {""}; }, "stop");
}
