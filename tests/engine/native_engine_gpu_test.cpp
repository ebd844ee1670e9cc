// On the GPU machine (skipped without CUDA): the NativeEngine in bf16 on CUDA against the uncached
// bf16 forward. bf16 rounding differs between the cached and the full forward, so a near-tie can
// flip a greedy token and the continuations part from there. Logits here are ~28 (the fixture
// scales the head), where a bf16 step is 0.125 and exact ties among 151k tokens are common: on the
// CPU in bf16 the first of these 8 prompts agree for 158/256 tokens (62%), and every divergence was
// at a tie of 0 or 1 step. So each divergence must be such a tie (a wrong cache or position picks
// tokens far below the top); the agreement floor stays at 50% as a sanity check only.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <future>

#include "engine/engine_fixtures.hpp"
#include "support/skip.hpp"
#include "vime/engine/native_engine.hpp"

namespace {

// A divergence may pick a token this many bf16 steps below the uncached forward's top logit.
constexpr double kTieSteps = 4;

// How far below the uncached forward's top logit after `prefix` the logit of `token` is, in bf16
// steps (ulps) at that top logit.
double steps_below_top(vime::Model& model, const std::vector<int32_t>& prefix, int32_t token) {
  at::NoGradGuard no_grad;
  const std::vector<int64_t> sequence(prefix.begin(), prefix.end());
  const auto logits =
      model.forward(vime::PackedBatch::pack({sequence}, model.device()))[-1].to(at::kFloat).cpu();
  const double top = logits.max().item<double>();
  const double step = std::ldexp(1.0, std::ilogb(std::abs(top)) - 7);  // 8 significant bits
  return (top - logits[token].item<double>()) / step;
}

// `prompt` followed by the first `n` tokens of `output`.
std::vector<int32_t> prefix_of(std::vector<int32_t> prompt, const std::vector<int32_t>& output,
                               size_t n) {
  prompt.insert(prompt.end(), output.begin(), output.begin() + static_cast<std::ptrdiff_t>(n));
  return prompt;
}

}  // namespace

TEST_CASE("bf16 CUDA engine agrees with the uncached bf16 forward", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto model = vime::test::tiny_engine_model(at::kBFloat16, at::kCUDA);
  vime::engine::NativeEngine engine(*model, nullptr, {});
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 8; ++i) {
    std::vector<int32_t> p;
    for (int t = 0; t < 5 + 7 * i; ++t) p.push_back((1000 + 7919 * (i * 31 + t)) % 150000);
    prompts.push_back(p);
  }
  std::vector<std::future<vime::GenerateResponse>> results;
  for (const auto& p : prompts)
    results.push_back(std::async(
        std::launch::async, [&, p] { return engine.generate(vime::test::make_request(p, 32)); }));
  int64_t same_prefix = 0, total = 0, first_tokens_equal = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto out = results[i].get().output_ids;
    const auto expected = vime::test::greedy_reference(*model, prompts[i], 32);
    REQUIRE(out.size() == 32);
    size_t k = 0;
    while (k < out.size() && out[k] == expected[k]) ++k;
    same_prefix += static_cast<int64_t>(k);
    total += 32;
    first_tokens_equal += out[0] == expected[0];
    if (k < out.size()) {  // the engine's token was (nearly) tied with the uncached forward's
      CAPTURE(i, k);
      CHECK(steps_below_top(*model, prefix_of(prompts[i], expected, k), out[k]) <= kTieSteps);
    }
  }
  const double agreement = double(same_prefix) / double(total);
  WARN("bf16 greedy agreement (tokens before the first divergence): " << same_prefix << "/" << total
                                                                      << " = " << agreement);
  CHECK(first_tokens_equal >= 7);  // the prefill is the same computation
  CHECK(agreement >= 0.5);
}

TEST_CASE("the paged attention paths agree with the CPU path on CUDA", "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto model = vime::test::tiny_engine_model(at::kBFloat16, at::kCUDA);
  std::vector<vime::GenerateRequest> requests;
  for (int i = 0; i < 12; ++i) {
    std::vector<int32_t> p;
    for (int t = 0; t < 40 + 37 * i; ++t) p.push_back((500 + 7919 * (i % 4 * 31 + t)) % 150000);
    requests.push_back(vime::test::make_request(p, 40));  // groups of 3 share prompts (i % 4)
  }
  auto run = [&](vime::engine::NativeEngineOptions options) {
    vime::engine::NativeEngine engine(*model, nullptr, options);
    std::vector<std::future<vime::GenerateResponse>> futures;
    for (const auto& r : requests) futures.push_back(engine.submit(r, {}));
    std::vector<std::vector<int32_t>> out;
    for (auto& f : futures) out.push_back(f.get().output_ids);
    return out;
  };
  // The reference: what the CPU runs (gathered K/V, the ATen sampler), here on CUDA.
  vime::engine::NativeEngineOptions cpu_path, gather, block_table, chunked;
  cpu_path.attention_path = vime::PagedAttentionPath::kGather;
  cpu_path.sampler_path = vime::engine::SamplerPath::kReference;
  cpu_path.kv_block_size = 16;
  gather.attention_path = vime::PagedAttentionPath::kGather;
  gather.kv_block_size = 16;
  block_table.kv_block_size = 256;
  chunked.kv_block_size = 256;
  chunked.max_prefill_tokens = 64;
  WARN("flash attention reads block tables: " << vime::flash_block_table_available(256));
  const auto reference = run(cpu_path);
  for (auto* options : {&gather, &block_table, &chunked}) {
    const auto out = run(*options);
    int64_t same = 0, total = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      REQUIRE(out[i].size() == reference[i].size());
      size_t k = 0;
      while (k < out[i].size() && out[i][k] == reference[i][k]) ++k;
      same += static_cast<int64_t>(k);
      total += static_cast<int64_t>(out[i].size());
      if (k < out[i].size()) {  // both tokens (nearly) tied at the uncached forward's top
        CAPTURE(i, k, options->kv_block_size);
        const auto prefix = prefix_of(requests[i].input_ids, reference[i], k);
        CHECK(steps_below_top(*model, prefix, out[i][k]) <= kTieSteps);
        CHECK(steps_below_top(*model, prefix, reference[i][k]) <= kTieSteps);
      }
    }
    WARN("agreement with the CPU path (block size " << options->kv_block_size << "): " << same
                                                    << "/" << total);
    CHECK(double(same) / double(total) >= 0.5);
  }
}
