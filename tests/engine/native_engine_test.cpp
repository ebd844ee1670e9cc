// The NativeEngine on a tiny random Qwen3-shaped model on CPU (fp32) with the real Qwen3
// tokenizer: outputs against the uncached full forward, batch independence, continuous batching,
// concurrency, stop conditions, abort, pause/resume, release_memory and in-place weight updates.
#include "vime/engine/native_engine.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include "engine/engine_fixtures.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"

using vime::GenerateRequest;
using vime::GenerateResponse;
using vime::engine::NativeEngine;
using vime::engine::NativeEngineOptions;
using vime::test::make_request;

namespace {

vime::Model& shared_model() {
  static auto model = vime::test::tiny_engine_model(at::kFloat, at::kCPU);
  return *model;
}

std::vector<int32_t> prompt_of(const std::string& text) {
  return vime::test::real_tokenizer("qwen3").encode(text);
}

const std::vector<std::string> kTexts = {"The capital of France is",
                                         "1 + 1 =",
                                         "Once upon a time, in a land far away,",
                                         "def fibonacci(n):",
                                         "Translate to German: good morning",
                                         "Q: why is the sky blue?\nA:"};

void wait_until(const std::function<bool()>& done) {
  for (int i = 0; i < 2000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(done());
}

}  // namespace

TEST_CASE("greedy output equals an argmax loop over the uncached forward", "[engine]") {
  auto& model = shared_model();
  NativeEngine engine(model, &vime::test::real_tokenizer("qwen3"), {});
  std::vector<std::future<GenerateResponse>> results;
  for (const auto& text : kTexts)  // submitted together: prefilled packed, decoded batched
    results.push_back(std::async(std::launch::async, [&, text] {
      return engine.generate(make_request(prompt_of(text), 12));
    }));
  for (size_t i = 0; i < kTexts.size(); ++i) {
    CAPTURE(kTexts[i]);
    const GenerateResponse r = results[i].get();
    CHECK(r.finish_reason == "length");
    CHECK(r.prompt_tokens == static_cast<int64_t>(prompt_of(kTexts[i]).size()));
    CHECK(r.output_ids == vime::test::greedy_reference(model, prompt_of(kTexts[i]), 12));
    const auto expected =
        vime::test::reference_log_probs(model, prompt_of(kTexts[i]), r.output_ids, 1.0);
    REQUIRE(r.output_log_probs.size() == expected.size());
    for (size_t t = 0; t < expected.size(); ++t)
      CHECK(r.output_log_probs[t] == Approx(expected[t]).margin(1e-5));
  }
}

TEST_CASE("sampled log-probs are log_softmax(logits / T) of the full forward", "[engine]") {
  auto& model = shared_model();
  NativeEngine engine(model, nullptr, {});
  for (double temperature : {0.7, 1.3}) {
    auto request = make_request(prompt_of(kTexts[2]), 16, temperature, 5);
    request.sampling_params.top_p = 0.9;  // the kept set changes the draw, not the log-prob
    const GenerateResponse r = engine.generate(request);
    REQUIRE(r.output_ids.size() == 16);
    const auto expected =
        vime::test::reference_log_probs(model, prompt_of(kTexts[2]), r.output_ids, temperature);
    for (size_t t = 0; t < expected.size(); ++t)
      CHECK(r.output_log_probs[t] == Approx(expected[t]).margin(1e-5));
  }
}

TEST_CASE("a seeded request gives the same tokens alone and inside a batch", "[engine]") {
  auto& model = shared_model();
  auto target = make_request(prompt_of(kTexts[0]), 24, 1.5, 1234);
  std::vector<int32_t> alone;
  {
    NativeEngine engine(model, nullptr, {});
    alone = engine.generate(target).output_ids;
  }
  NativeEngine engine(model, nullptr, {});
  engine.pause();  // queue everything, so that all 17 start in one batch
  std::vector<std::future<GenerateResponse>> others;
  for (int i = 0; i < 16; ++i)
    others.push_back(std::async(std::launch::async, [&, i] {
      return engine.generate(
          make_request(prompt_of(kTexts[i % kTexts.size()] + " and"), 10 + i, 1.0, i));
    }));
  auto mine = std::async(std::launch::async, [&] { return engine.generate(target); });
  wait_until([&] { return engine.stats().queued == 17; });
  engine.resume();
  CHECK(mine.get().output_ids == alone);
  for (auto& f : others) f.get();
  CHECK(engine.stats().decode_tokens > engine.stats().decode_steps);  // steps were batched
  // Unseeded requests still differ from each other (each gets its own seed).
  auto a = engine.generate(make_request(prompt_of(kTexts[1]), 24, 2.0));
  auto b = engine.generate(make_request(prompt_of(kTexts[1]), 24, 2.0));
  CHECK(a.output_ids != b.output_ids);
}

TEST_CASE("continuous batching: a short request joins and finishes while a long one runs",
          "[engine]") {
  auto& model = shared_model();
  NativeEngine engine(model, nullptr, {});
  auto long_request = make_request(prompt_of(kTexts[2]), 300);
  auto long_result = std::async(std::launch::async, [&] { return engine.generate(long_request); });
  wait_until([&] { return engine.stats().generated_tokens >= 20; });
  const GenerateResponse short_result = engine.generate(make_request(prompt_of(kTexts[1]), 5));
  CHECK(short_result.output_ids.size() == 5);
  CHECK(long_result.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
  const GenerateResponse long_done = long_result.get();
  CHECK(long_done.output_ids.size() == 300);
  // The uncached argmax reference costs O(n^2): it checks the first 64 tokens (several KV blocks),
  // the same request run alone checks all 300.
  const auto reference = vime::test::greedy_reference(model, long_request.input_ids, 64);
  CHECK(std::vector<int32_t>(long_done.output_ids.begin(), long_done.output_ids.begin() + 64) ==
        reference);
  NativeEngine alone(model, nullptr, {});
  CHECK(long_done.output_ids == alone.generate(long_request).output_ids);
  CHECK(short_result.output_ids == vime::test::greedy_reference(model, prompt_of(kTexts[1]), 5));
}

// Equality with the request run alone holds up to fp32 rounding: another batch shape (8 decode rows
// instead of 1, a split prefill) changes logits by ~1e-7, which moves an inverse-CDF draw only
// where it lands in the flat tail of the distribution (request 0 once drew a token of log-prob
// -12.5 and differed in a few percent of runs). top_k 5 keeps the draws out of the tail, so a flip
// needs the uniform within ~1e-7 of a boundary, while per-request seeds and sampling stay covered.
static GenerateRequest top5(GenerateRequest request) {
  request.sampling_params.top_k = 5;
  return request;
}

TEST_CASE("16 threads submitting at once each get their own output", "[engine]") {
  auto& model = shared_model();
  NativeEngineOptions options;
  options.max_running_requests = 8;  // the other half queues and joins as rows free up
  NativeEngine engine(model, nullptr, options);
  std::vector<std::thread> threads;
  std::vector<GenerateResponse> results(16);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      results[i] = engine.generate(
          top5(make_request(prompt_of(kTexts[i % kTexts.size()]), 4 + i % 5, 0.8, 100 + i)));
    });
  for (auto& t : threads) t.join();
  NativeEngine alone(model, nullptr, {});
  for (int i = 0; i < 16; ++i) {
    CAPTURE(i);
    CHECK(results[i].output_ids.size() == static_cast<size_t>(4 + i % 5));
    CHECK(results[i].output_ids ==
          alone
              .generate(
                  top5(make_request(prompt_of(kTexts[i % kTexts.size()]), 4 + i % 5, 0.8, 100 + i)))
              .output_ids);
  }
  CHECK(engine.stats().requests_finished == 16);
  CHECK(engine.stats().prefill_forwards > 1);
}

TEST_CASE("stop token ids, stop strings, max_new_tokens and a full context", "[engine]") {
  auto& model = shared_model();
  const auto& qwen = vime::test::real_tokenizer("qwen3");
  NativeEngineOptions options;
  options.eos_token_ids = {vime::test::kQwenImEnd};
  const auto prompt = prompt_of(kTexts[5]);
  const auto greedy = vime::test::greedy_reference(model, prompt, 16);
  {
    NativeEngine engine(model, &qwen, options);
    auto request = make_request(prompt, 16);
    request.sampling_params.stop_token_ids = {greedy[5]};
    auto r = engine.generate(request);
    const auto first = std::find(greedy.begin(), greedy.end(), greedy[5]) - greedy.begin();
    CHECK(r.finish_reason == "stop");
    CHECK(r.output_ids == std::vector<int32_t>(greedy.begin(), greedy.begin() + first + 1));
  }
  {
    NativeEngine engine(model, &qwen, options);
    const std::string text = qwen.decode(std::vector<int32_t>(greedy.begin(), greedy.begin() + 8));
    const std::string stop = text.substr(text.size() / 2, 3);
    REQUIRE(!stop.empty());
    auto request = make_request(prompt, 16);
    request.sampling_params.stop = {stop};
    auto r = engine.generate(request);
    CAPTURE(text, stop);
    CHECK(r.finish_reason == "stop");
    CHECK(r.output_ids.size() <= 8);
    CHECK(qwen.decode(r.output_ids).find(stop) != std::string::npos);
    CHECK(qwen.decode(std::vector<int32_t>(r.output_ids.begin(), r.output_ids.end() - 1))
              .find(stop) == std::string::npos);
  }
  {
    NativeEngine engine(model, &qwen, options);
    auto r = engine.generate(make_request(prompt, 7));
    CHECK(r.finish_reason == "length");
    CHECK(r.output_ids.size() == 7);
  }
  {
    options.max_context_len = static_cast<int64_t>(prompt.size()) + 5;
    NativeEngine engine(model, &qwen, options);
    auto r = engine.generate(make_request(prompt, 0));
    CHECK(r.finish_reason == "length");
    CHECK(r.output_ids.size() == 5);
    CHECK_THROWS_AS(engine.generate(make_request(prompt_of(kTexts[2] + kTexts[3]), 4)),
                    vime::Error);
  }
}

TEST_CASE("EOS ends a request unless ignore_eos", "[engine]") {
  auto& model = shared_model();
  const auto prompt = prompt_of(kTexts[3]);
  const auto greedy = vime::test::greedy_reference(model, prompt, 6);
  NativeEngineOptions options;
  options.eos_token_ids = {greedy[2]};  // pretend the third greedy token is EOS
  NativeEngine engine(model, nullptr, options);
  auto r = engine.generate(make_request(prompt, 6));
  CHECK(r.finish_reason == "stop");
  CHECK(r.output_ids.back() == greedy[2]);
  auto request = make_request(prompt, 6);
  request.sampling_params.extra["ignore_eos"] = vime::Json(true);
  CHECK(engine.generate(request).output_ids == greedy);
}

TEST_CASE("invalid requests fail alone and the engine keeps serving", "[engine]") {
  auto& model = shared_model();
  NativeEngineOptions options;
  options.max_context_len = 64;
  NativeEngine engine(model, nullptr, options);
  auto running = std::async(
      std::launch::async, [&] { return engine.generate(make_request(prompt_of(kTexts[0]), 100)); });
  CHECK_THROWS_AS(engine.generate(make_request({}, 4)), vime::Error);
  CHECK_THROWS_AS(engine.generate(make_request(std::vector<int32_t>(64, 5), 4)), vime::Error);
  CHECK_THROWS_AS(engine.generate(make_request({1, 151936}, 4)), vime::Error);
  auto bad = make_request(prompt_of(kTexts[0]), 4, 1.0);
  bad.sampling_params.top_p = 0.0;
  CHECK_THROWS_AS(engine.generate(bad), vime::Error);
  auto stops = make_request(prompt_of(kTexts[0]), 4);
  stops.sampling_params.stop = {"x"};  // no tokenizer to match stop strings with
  CHECK_THROWS_AS(engine.generate(stops), vime::Error);
  const GenerateResponse full = running.get();  // 100 new tokens do not fit: the context ends it
  CHECK(full.finish_reason == "length");
  CHECK(full.output_ids.size() == 64 - prompt_of(kTexts[0]).size());
  CHECK(engine.generate(make_request(prompt_of(kTexts[1]), 3)).output_ids.size() == 3);
}

TEST_CASE("abort_all ends running and queued requests with partial output", "[engine]") {
  auto& model = shared_model();
  NativeEngineOptions options;
  options.max_running_requests = 2;
  NativeEngine engine(model, nullptr, options);
  std::vector<std::future<GenerateResponse>> results;
  for (int i = 0; i < 3; ++i)
    results.push_back(std::async(std::launch::async, [&, i] {
      return engine.generate(make_request(prompt_of(kTexts[i]), 900));
    }));
  wait_until([&] { return engine.stats().generated_tokens >= 20 && engine.stats().queued == 1; });
  engine.abort_all();
  int with_output = 0;
  for (auto& f : results) {
    const GenerateResponse r = f.get();
    CHECK(r.finish_reason == "abort");
    CHECK(r.output_ids.size() < 900);
    CHECK(r.output_log_probs.size() == r.output_ids.size());
    with_output += !r.output_ids.empty();
  }
  CHECK(with_output == 2);  // the queued one had not started
  auto after = engine.generate(make_request(prompt_of(kTexts[1]), 4));
  CHECK(after.finish_reason == "length");
  CHECK(after.output_ids == vime::test::greedy_reference(model, prompt_of(kTexts[1]), 4));
}

TEST_CASE("pause holds requests, release_memory frees the cache, resume goes on", "[engine]") {
  auto& model = shared_model();
  NativeEngine engine(model, nullptr, {});
  const auto prompt = prompt_of(kTexts[4]);
  const auto expected = vime::test::greedy_reference(model, prompt, 60);
  auto held =
      std::async(std::launch::async, [&] { return engine.generate(make_request(prompt, 60)); });
  wait_until([&] { return engine.stats().generated_tokens >= 10; });
  engine.pause();
  const int64_t generated = engine.stats().generated_tokens;
  CHECK(generated < 60);
  auto queued =
      std::async(std::launch::async, [&] { return engine.generate(make_request(prompt, 5)); });
  wait_until([&] { return engine.stats().queued == 1; });
  engine.release_memory();  // the held request is prefilled again (prompt + output so far)
  CHECK(engine.stats().kv_cache_bytes == 0);
  // A second release is a round trip through the engine's loop, which has work queued: had the
  // pause let a step start, that step finished before this returns.
  engine.release_memory();
  CHECK(engine.stats().generated_tokens == generated);
  engine.resume();
  CHECK(held.get().output_ids == expected);
  CHECK(queued.get().output_ids == std::vector<int32_t>(expected.begin(), expected.begin() + 5));
  CHECK(engine.stats().kv_cache_bytes > 0);
  engine.release_memory();
  CHECK(engine.generate(make_request(prompt, 5)).output_ids ==
        std::vector<int32_t>(expected.begin(), expected.begin() + 5));
}

TEST_CASE("parameters changed in place while paused change the outputs", "[engine]") {
  auto model = vime::test::tiny_engine_model(at::kFloat, at::kCPU, 256, 11);
  NativeEngine engine(*model, nullptr, {});
  engine.set_weight_version("1");
  const auto prompt = prompt_of(kTexts[0]);
  const auto before = engine.generate(make_request(prompt, 8));
  CHECK(before.weight_version == "1");
  engine.pause();
  {
    at::NoGradGuard no_grad;  // what the trainer's optimizer step does: in place, no copy
    for (auto& [name, t] : model->named_parameters())
      if (name == "model.embed_tokens.weight") t.add_(at::randn_like(t) * 0.05);
  }
  engine.set_weight_version("2");
  engine.resume();
  const auto after = engine.generate(make_request(prompt, 8));
  CHECK(after.weight_version == "2");
  CHECK(after.output_ids != before.output_ids);
  CHECK(after.output_ids == vime::test::greedy_reference(*model, prompt, 8));
}

TEST_CASE("NativeEngineOptions from flags", "[engine]") {
  const std::vector<std::string> none;
  const auto defaults = NativeEngineOptions::from(vime::core::parse_args(none));
  CHECK(defaults.seed == 42);
  CHECK(defaults.max_context_len == 0);
  const std::vector<std::string> tokens{"--rollout-seed",
                                        "7",
                                        "--vllm-server-concurrency",
                                        "32",
                                        "--rollout-max-context-len",
                                        "4096"};
  const auto options = NativeEngineOptions::from(vime::core::parse_args(tokens));
  CHECK(options.seed == 7);
  CHECK(options.max_running_requests == 32);
  CHECK(options.max_context_len == 4096);
  const std::vector<std::string> kv{"--vllm-gpu-memory-utilization",
                                    "0.7",
                                    "--vllm-max-num-batched-tokens",
                                    "2048",
                                    "--vllm-block-size",
                                    "32",
                                    "--rollout-kv-cache-bytes",
                                    "1000000"};
  const auto paged = NativeEngineOptions::from(vime::core::parse_args(kv));
  CHECK(paged.gpu_memory_utilization == Approx(0.7));
  CHECK(paged.max_prefill_tokens == 2048);
  CHECK(paged.kv_block_size == 32);
  CHECK(paged.max_kv_cache_bytes == 1000000);
  CHECK(paged.gpu_memory_flag == "--vllm-gpu-memory-utilization");
  const std::vector<std::string> bad{"--vllm-gpu-memory-utilization", "1.5"};
  CHECK_THROWS_AS(NativeEngineOptions::from(vime::core::parse_args(bad)), vime::UsageError);
  // The embedded engine's own knob; unset, CUDA sizes the cache at vLLM's 0.9.
  CHECK(defaults.gpu_memory_utilization == 0);
  const std::vector<std::string> own{"--rollout-gpu-memory-utilization", "0.5"};
  const auto sized = NativeEngineOptions::from(vime::core::parse_args(own));
  CHECK(sized.gpu_memory_utilization == Approx(0.5));
  CHECK(sized.gpu_memory_flag == "--rollout-gpu-memory-utilization");
  for (const char* value : {"0", "1.2", "-0.1"}) {
    const std::vector<std::string> out_of_range{"--rollout-gpu-memory-utilization", value};
    CHECK_THROWS_WITH(NativeEngineOptions::from(vime::core::parse_args(out_of_range)),
                      Catch::Contains("--rollout-gpu-memory-utilization must be in (0, 1]"));
  }
}

TEST_CASE("a KV cache limit preempts requests and recomputes them later", "[engine]") {
  auto& model = shared_model();
  std::vector<GenerateRequest> requests;
  for (int i = 0; i < 3; ++i) requests.push_back(make_request(prompt_of(kTexts[i]), 270, 0.9, i));
  std::vector<std::vector<int32_t>> unlimited;
  {
    NativeEngine engine(model, nullptr, {});
    for (const auto& r : requests) unlimited.push_back(engine.generate(r).output_ids);
  }
  // 2 layers x K,V x 2 KV heads x 16 x 4 bytes = 512 bytes per position, 8 KiB per block of 16:
  // 24 blocks hold 384 positions, one request's 290 but not two, so past ~190 tokens each one
  // runs at a time.
  NativeEngineOptions options;
  options.max_context_len = 300;
  options.max_kv_cache_bytes = 24 << 13;
  NativeEngine engine(model, nullptr, options);
  std::vector<std::future<GenerateResponse>> results;
  for (const auto& r : requests)
    results.push_back(std::async(std::launch::async, [&engine, r] { return engine.generate(r); }));
  for (size_t i = 0; i < results.size(); ++i) {
    CAPTURE(i);
    CHECK(results[i].get().output_ids == unlimited[i]);
  }
  CHECK(engine.stats().preempted >= 2);
  CHECK(engine.stats().kv_cache_bytes == (24 << 13));
}

TEST_CASE("a step that runs out of device memory preempts its requests, which finish the same",
          "[engine]") {
  auto& model = shared_model();
  std::vector<GenerateRequest> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(make_request(prompt_of(kTexts[i]), 24, 0.9, i));
  auto run = [&](const char* oom_at_step) {
    if (oom_at_step != nullptr) ::setenv("VIME_TEST_OOM_AT_STEP", oom_at_step, 1);
    NativeEngine engine(model, nullptr, {});
    ::unsetenv("VIME_TEST_OOM_AT_STEP");
    std::vector<std::future<GenerateResponse>> futures;
    for (const auto& r : requests) futures.push_back(engine.submit(r, {}));
    std::vector<std::vector<int32_t>> out;
    for (auto& f : futures) out.push_back(f.get().output_ids);
    return std::make_pair(out, engine.stats());
  };
  const auto [expected, clean] = run(nullptr);
  CHECK(clean.out_of_memory_steps == 0);
  // Step 5 decodes all four: they go back to wait, and two at a time run on.
  const auto [out, stats] = run("5");
  CHECK(out == expected);  // per-request seeds: the batch a token is drawn in does not matter
  CHECK(stats.out_of_memory_steps == 1);
  CHECK(stats.preempted >= 4);
  // One request alone that does not fit fails with the numbers, the engine stays up.
  ::setenv("VIME_TEST_OOM_AT_STEP", "2", 1);
  NativeEngine engine(model, nullptr, {});
  ::unsetenv("VIME_TEST_OOM_AT_STEP");
  CHECK_THROWS_WITH(engine.generate(requests[0]),
                    Catch::Contains("out of device memory in a step of one request"));
  CHECK(engine.generate(requests[1]).output_ids == expected[1]);
}
