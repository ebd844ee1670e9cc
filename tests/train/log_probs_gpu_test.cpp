// On the GPU machine (skipped without CUDA): linear_token_log_probs through its fused CUDA kernels
// (linear_log_probs_kernel.cu) against the plain ATen composition (token_log_probs over the whole
// logits, in fp64 on the same GPU), values and gradients, at T = 1 and 0.7, with and without the
// entropy term, over a subset of rows in several chunks (the last one partial), for a vocabulary
// the 16-byte loads divide and one they do not.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>

#include <catch2/catch.hpp>

#include "support/skip.hpp"
#include "vime/train/linear_log_probs.hpp"
#include "vime/train/log_probs.hpp"

using namespace vime::train;

namespace {

// max |a - b| / max |b|.
double relative_error(const at::Tensor& a, const at::Tensor& b) {
  auto ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  return (ad - bd).abs().max().item<double>() / std::max(bd.abs().max().item<double>(), 1e-30);
}

double max_abs_error(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

}  // namespace

TEST_CASE("the fused CUDA output head equals the ATen log-probs, entropy and gradients",
          "[gpu][train_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(17);
  const int64_t tokens = 600, dim = 64, chunk_rows = 128;
  // Entries in {-1, 0, 1} and {-0.5, 0, 0.5}: every logit is a multiple of 0.5 within +-32, exact
  // in bf16 whatever the GEMM's order, so bf16 and fp32 runs see the logits the fp64 reference
  // sees.
  auto ternary = [&](int64_t rows, int64_t cols) {
    return at::randint(-1, 2, {rows, cols}, gen, at::TensorOptions().dtype(at::kDouble));
  };
  std::vector<int64_t> row_list;  // every row but each 5th: unscored rows get no gradient
  for (int64_t r = 0; r < tokens; ++r)
    if (r % 5 != 3) row_list.push_back(r);
  const auto n = static_cast<int64_t>(row_list.size());  // 480: chunks of 128, the last 96
  auto rows = at::tensor(row_list, at::kLong);
  auto hidden64 = ternary(tokens, dim);

  for (int64_t vocab : {4104, 1003}) {  // 1003: not a multiple of 8, the scalar-load kernel
    auto weight64 = ternary(vocab, dim) * 0.5;
    auto targets = at::randint(0, vocab, {n}, gen, at::TensorOptions().dtype(at::kLong));
    targets[0] = 0;
    targets[n - 1] = vocab - 1;
    auto w_lp = at::randn({n}, gen, at::TensorOptions().dtype(at::kDouble));
    auto w_h = at::randn({n}, gen, at::TensorOptions().dtype(at::kDouble));
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      // fp32: only the order of fp32 sums differs; bf16: the kernel writes the gradient of the
      // logits in bf16 (2^-9 relative) and the GEMMs run in bf16.
      const double grad_tol = dtype == at::kFloat ? 1e-5 : 2e-2;
      for (double temperature : {1.0, 0.7}) {
        for (bool with_entropy : {false, true}) {
          CAPTURE(vocab, dtype, temperature, with_entropy);
          auto hidden = hidden64.to(cuda, dtype).requires_grad_(true);
          auto weight = weight64.to(cuda, dtype).requires_grad_(true);
          auto fused = linear_token_log_probs(hidden, weight, rows, targets, temperature,
                                              chunk_rows, with_entropy);
          REQUIRE(fused.log_probs.is_cuda());
          REQUIRE(fused.entropy.defined() == with_entropy);

          auto hidden_ref = hidden64.to(cuda).requires_grad_(true);
          auto weight_ref = weight64.to(cuda).requires_grad_(true);
          auto direct = token_log_probs(at::mm(hidden_ref, weight_ref.t()), rows.to(cuda),
                                        targets.to(cuda), temperature, chunk_rows);
          // Values: same logits, fp32 accumulation against fp64.
          CHECK(max_abs_error(fused.log_probs, direct.log_probs) < 1e-4);
          if (with_entropy) CHECK(max_abs_error(fused.entropy, direct.entropy) < 1e-4);

          auto objective = [&](const TokenLogProbs& t) {
            auto o = (t.log_probs.to(at::kDouble) * w_lp.to(cuda)).sum();
            return with_entropy ? o + (t.entropy.to(at::kDouble) * w_h.to(cuda)).sum() : o;
          };
          auto g = torch::autograd::grad({objective(fused)}, {hidden, weight});
          auto g_ref = torch::autograd::grad({objective(direct)}, {hidden_ref, weight_ref});
          CHECK(g[0].scalar_type() == dtype);
          CHECK(g[1].scalar_type() == dtype);
          CHECK(relative_error(g[0], g_ref[0]) < grad_tol);
          CHECK(relative_error(g[1], g_ref[1]) < grad_tol);
          CHECK(g[0][3].abs().sum().item<double>() == 0);  // row 3 is not scored
        }
      }
    }
  }
}

TEST_CASE("the fused CUDA output head's entropy alone has the ATen gradient", "[gpu][train_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(19);
  auto opts = at::TensorOptions().dtype(at::kDouble);
  auto hidden64 = at::randn({70, 32}, gen, opts);
  auto weight64 = at::randn({512, 32}, gen, opts) * 0.3;
  auto targets = at::randint(0, 512, {70}, gen, opts.dtype(at::kLong));
  auto hidden = hidden64.to(cuda, at::kFloat).requires_grad_(true);
  auto weight = weight64.to(cuda, at::kFloat).requires_grad_(true);
  auto fused = linear_token_log_probs(hidden, weight, at::Tensor(), targets, 0.7, 32, true);
  auto hidden_ref = hidden64.to(cuda).requires_grad_(true);
  auto weight_ref = weight64.to(cuda).requires_grad_(true);
  auto direct =
      token_log_probs(at::mm(hidden_ref, weight_ref.t()), at::Tensor(), targets.to(cuda), 0.7, 32);
  CHECK(max_abs_error(fused.entropy, direct.entropy) < 1e-4);
  // Only the entropy reaches the loss: the log-prob's gradient is undefined in backward.
  auto g = torch::autograd::grad({fused.entropy.sum()}, {hidden, weight});
  auto g_ref = torch::autograd::grad({direct.entropy.sum()}, {hidden_ref, weight_ref});
  CHECK(relative_error(g[0], g_ref[0]) < 1e-4);
  CHECK(relative_error(g[1], g_ref[1]) < 1e-4);
}
