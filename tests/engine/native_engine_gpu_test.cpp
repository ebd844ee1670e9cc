// On the GPU machine (skipped without CUDA): the NativeEngine in bf16 on CUDA against the uncached
// bf16 forward. bf16 rounding differs between the cached and the full forward, so a near-tie can
// flip a greedy token and the continuations part from there: the test reports the agreement.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <future>

#include "engine/engine_fixtures.hpp"
#include "vime/engine/native_engine.hpp"

TEST_CASE("bf16 CUDA engine agrees with the uncached bf16 forward", "[gpu][engine_gpu]") {
  if (!at::hasCUDA()) {
    WARN("CUDA is not available here: skipped");
    return;
  }
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
  }
  const double agreement = double(same_prefix) / double(total);
  WARN("bf16 greedy agreement (tokens before the first divergence): " << same_prefix << "/" << total
                                                                      << " = " << agreement);
  CHECK(first_tokens_equal >= 7);  // the prefill is the same computation
  CHECK(agreement >= 0.5);
}
