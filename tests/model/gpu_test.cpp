// On the GPU machine (skipped without CUDA): the CUDA model agrees with the CPU model in fp32,
// flash varlen attention agrees with the math path in bf16 (values and gradients), and a bf16
// forward/backward/optimizer step with recompute trains.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>

#include <catch2/catch.hpp>

#include "support/skip.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/model/attention.hpp"
#include "vime/train/log_probs.hpp"
#include "vime/train/optimizer.hpp"

namespace {

const std::string kGolden = VIME_SOURCE_DIR "/tests/model/golden/";

}  // namespace

TEST_CASE("the CUDA model matches the CPU model in fp32", "[gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto cpu = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCPU);
  auto gpu = vime::ckpt::load_hf_model(kGolden + "tiny_qwen3", at::kFloat, at::kCUDA);
  at::NoGradGuard no_grad;
  std::vector<std::vector<int64_t>> seqs{{1, 2, 3, 4, 5, 6, 7}, {9, 8, 7}};
  auto a = cpu->forward(vime::PackedBatch::pack(seqs, at::kCPU));
  auto b = gpu->forward(vime::PackedBatch::pack(seqs, at::kCUDA)).to(at::kCPU);
  CHECK((a - b).abs().max().item<double>() < 1e-4);
}

TEST_CASE("flash varlen attention equals the math path in bf16, gradients too", "[gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  if (!vime::flash_attention_available(
          at::zeros({1}, at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16)))) {
    VIME_SKIP("this LibTorch has no flash varlen attention");
  }
  auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  vime::VarlenInfo info;
  info.cu_seqlens = {0, 100, 103, 356};
  info.max_seqlen = 253;
  info.cu_seqlens_device =
      at::tensor(std::vector<int32_t>{0, 100, 103, 356}, at::kInt).to(at::kCUDA);
  auto q = at::randn({356, 8, 64}, opts).requires_grad_(true);
  auto k = at::randn({356, 2, 64}, opts).requires_grad_(true);
  auto v = at::randn({356, 2, 64}, opts).requires_grad_(true);
  auto g = at::randn({356, 8, 64}, opts);
  auto run = [&](vime::AttentionBackend backend) {
    auto out = vime::varlen_causal_attention(q, k, v, info, 0.125, backend);
    auto grads = torch::autograd::grad({out}, {q, k, v}, {g});
    return std::make_pair(out.detach().to(at::kFloat), grads);
  };
  auto [flash, flash_grads] = run(vime::AttentionBackend::kFlash);
  auto [math, math_grads] = run(vime::AttentionBackend::kMath);
  CHECK((flash - math).abs().max().item<double>() < 2e-2);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    auto diff = (flash_grads[i].to(at::kFloat) - math_grads[i].to(at::kFloat)).abs().max();
    CHECK(diff.item<double>() < 5e-2 * (1 + math_grads[i].abs().max().item<double>()));
  }
}

// Context parallelism's call: each sequence's queries are the last rows of its keys (a chunk
// against its sample's keys up to the chunk's end), so the causal mask must be aligned at the
// bottom right, as the math path aligns it.
TEST_CASE("flash attention with fewer queries than keys aligns the causal mask at the end",
          "[gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  if (!vime::flash_attention_available(
          at::zeros({1}, at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16)))) {
    VIME_SKIP("this LibTorch has no flash varlen attention");
  }
  auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  // Chunks of 64 queries against 64, 256 and 128 keys; one of 3 against 3 (a short sample).
  vime::VarlenInfo qi, ki;
  qi.cu_seqlens = {0, 64, 128, 192, 195};
  ki.cu_seqlens = {0, 64, 320, 448, 451};
  qi.max_seqlen = 64;
  ki.max_seqlen = 256;
  auto on_cuda = [](const std::vector<int64_t>& cu) {
    return at::tensor(std::vector<int32_t>(cu.begin(), cu.end()), at::kInt).to(at::kCUDA);
  };
  qi.cu_seqlens_device = on_cuda(qi.cu_seqlens);
  ki.cu_seqlens_device = on_cuda(ki.cu_seqlens);
  auto q = at::randn({195, 8, 64}, opts).requires_grad_(true);
  auto k = at::randn({451, 2, 64}, opts).requires_grad_(true);
  auto v = at::randn({451, 2, 64}, opts).requires_grad_(true);
  auto g = at::randn({195, 8, 64}, opts);
  auto run = [&](vime::AttentionBackend backend) {
    auto out = vime::varlen_causal_attention(q, k, v, qi, ki, 0.125, backend);
    auto grads = torch::autograd::grad({out}, {q, k, v}, {g});
    return std::make_pair(out.detach().to(at::kFloat), grads);
  };
  auto [flash, flash_grads] = run(vime::AttentionBackend::kFlash);
  auto [math, math_grads] = run(vime::AttentionBackend::kMath);
  CHECK((flash - math).abs().max().item<double>() < 2e-2);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    auto diff = (flash_grads[i].to(at::kFloat) - math_grads[i].to(at::kFloat)).abs().max();
    CHECK(diff.item<double>() < 5e-2 * (1 + math_grads[i].abs().max().item<double>()));
  }
}

TEST_CASE("a bf16 forward/backward/step on CUDA with recompute trains", "[gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  auto model = vime::ckpt::load_hf_model(kGolden + "tiny_qwen2", at::kBFloat16, at::kCUDA);
  model->set_recompute({true, 1});
  vime::OptimizerConfig cfg;
  vime::Optimizer opt(model->named_parameters(), cfg);
  std::vector<std::vector<int64_t>> seqs{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14}};
  auto batch = vime::PackedBatch::pack(seqs, at::kCUDA);
  auto rows = vime::train::response_rows(batch.tokens, {8, 6}, {7, 5});
  double first = 0, last = 0;
  for (int i = 0; i < 20; ++i) {
    auto scored = vime::train::token_log_probs(model->forward(batch), rows.rows, rows.targets, 1.0);
    auto loss = -scored.log_probs.mean();
    loss.backward();
    opt.accumulate_grads();
    auto r = opt.step(3e-3);
    CHECK(r.is_updated);
    (i == 0 ? first : last) = loss.item<double>();
  }
  CHECK(last < 0.5 * first);
}
