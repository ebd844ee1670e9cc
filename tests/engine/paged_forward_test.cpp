// The paged forward against the full uncached forward, at the logits: prefill chunks, decode rows,
// shared prefixes, and the attention paths.
#include "vime/model/paged_forward.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>

#include "engine/engine_fixtures.hpp"

namespace {

at::Tensor full_last_logits(vime::Model& model, const std::vector<int64_t>& sequence) {
  return model.forward(vime::PackedBatch::pack({sequence}, model.device()))[-1];
}

}  // namespace

TEST_CASE("paged forward: chunks, decode rows and a shared prefix give the full forward's logits",
          "[engine]") {
  auto model = vime::test::tiny_engine_model(at::kFloat, at::kCPU, 256, 3);
  at::NoGradGuard no_grad;
  vime::PagedKvCache cache(model->config(), at::kFloat, at::kCPU, 4);
  cache.resize(16);
  const std::vector<int32_t> a{11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, b{31, 32, 33};
  const std::vector<int32_t> table_a{5, 2, 9}, table_b{0};
  auto full = [&](const std::vector<int32_t>& s, int64_t end) {
    return full_last_logits(*model, std::vector<int64_t>(s.begin(), s.begin() + end));
  };
  // Step 1: a's first chunk (7 tokens, no logits wanted) with all of b.
  auto l1 =
      vime::paged_forward(*model, cache, {{a, 0, 7, &table_a, false}, {b, 0, 3, &table_b, true}});
  REQUIRE(l1.size(0) == 1);
  CHECK((l1[0] - full(b, 3)).abs().max().item<double>() < 1e-4);
  // Step 2: the rest of a (crossing blocks) with b's first decode row.
  auto b2 = b;
  b2.push_back(40);
  auto l2 =
      vime::paged_forward(*model, cache, {{a, 7, 11, &table_a, true}, {b2, 3, 4, &table_b, true}});
  CHECK((l2[0] - full(a, 11)).abs().max().item<double>() < 1e-4);
  CHECK((l2[1] - full(b2, 4)).abs().max().item<double>() < 1e-4);
  // A sequence sharing a's first two blocks (8 positions) computes only from position 8.
  const std::vector<int32_t> c{11, 12, 13, 14, 15, 16, 17, 18, 50, 51};
  const std::vector<int32_t> table_c{5, 2, 12};
  auto l3 = vime::paged_forward(*model, cache, {{c, 8, 10, &table_c, true}},
                                vime::PagedAttentionPath::kGather);
  CHECK((l3[0] - full(c, 10)).abs().max().item<double>() < 1e-4);
}
