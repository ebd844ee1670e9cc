// On the GPU machine (skipped without CUDA): the MoE block's grouped GEMM (one at::_grouped_mm in
// bf16 on LibTorch >= 2.8, the per-segment loop otherwise) against the loop in fp32, values and
// gradients; the whole block on CUDA against the CPU.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <catch2/catch.hpp>

#include "support/skip.hpp"
#include "vime/core/torch_compat.hpp"
#include "vime/model/grouped_gemm.hpp"
#include "vime/model/moe.hpp"

namespace {

at::Tensor cpu_normal(std::vector<int64_t> shape, double scale, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::normal(0.0, scale, shape, gen, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace

TEST_CASE("the grouped GEMM on CUDA equals the per-segment loop, gradients too",
          "[gpu][model_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  // 8 groups, one empty, rows 16-byte aligned: 64 in, 32 out (the down projection's shape swapped).
  const std::vector<int32_t> sizes{5, 0, 17, 1, 9, 30, 2, 8};
  std::vector<int32_t> ends;
  int32_t total = 0;
  for (auto s : sizes) ends.push_back(total += s);
  auto x32 = cpu_normal({total, 64}, 1.0, 1), w32 = cpu_normal({8, 32, 64}, 0.1, 2);
  auto grad32 = cpu_normal({total, 32}, 1.0, 3);
  auto offsets = at::tensor(ends, at::TensorOptions().dtype(at::kInt));
  for (auto dtype : {at::kBFloat16, at::kFloat}) {
    CAPTURE(dtype);
    auto x = x32.to(at::kCUDA, dtype).requires_grad_(true);
    auto w = w32.to(at::kCUDA, dtype).requires_grad_(true);
    auto y = vime::grouped_linear(x, w, offsets.to(at::kCUDA));
    if (dtype == at::kBFloat16) CHECK(vime::grouped_linear_is_fused(x, w) == VIME_HAS_GROUPED_MM);
    y.backward(grad32.to(at::kCUDA, dtype));
    // The reference from the same (rounded) operands, in fp32 on the CPU.
    auto xr = x.detach().to(at::kCPU, at::kFloat).requires_grad_(true);
    auto wr = w.detach().to(at::kCPU, at::kFloat).requires_grad_(true);
    auto yr = vime::grouped_linear(xr, wr, offsets);
    yr.backward(grad32.to(dtype).to(at::kFloat));
    const double tol = dtype == at::kFloat ? 1e-4 : 3e-2;
    CHECK((y.to(at::kCPU, at::kFloat) - yr).abs().max().item<double>() < tol);
    CHECK((x.grad().to(at::kCPU, at::kFloat) - xr.grad()).abs().max().item<double>() < tol);
    CHECK((w.grad().to(at::kCPU, at::kFloat) - wr.grad()).abs().max().item<double>() < tol * 4);
  }
}

TEST_CASE("the MoE block on CUDA matches the CPU", "[gpu][model_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  vime::MoeConfig config;
  config.num_experts = 16;
  config.num_experts_per_tok = 4;
  config.moe_intermediate_size = 32;
  vime::MoeWeights cpu;
  cpu.router = cpu_normal({16, 64}, 1.0, 4);  // decisive routing: bf16 rounding flips no choice
  cpu.gate = cpu_normal({16, 32, 64}, 0.1, 5);
  cpu.up = cpu_normal({16, 32, 64}, 0.1, 6);
  cpu.down = cpu_normal({16, 64, 32}, 0.1, 7);
  auto h = cpu_normal({50, 64}, 1.0, 8);
  auto expected = vime::moe_block(cpu, h, config);
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    CAPTURE(dtype);
    vime::MoeWeights gpu;
    gpu.router = cpu.router.to(at::kCUDA, dtype);
    gpu.gate = cpu.gate.to(at::kCUDA, dtype);
    gpu.up = cpu.up.to(at::kCUDA, dtype);
    gpu.down = cpu.down.to(at::kCUDA, dtype);
    auto got = vime::moe_block(gpu, h.to(at::kCUDA, dtype), config);
    if (dtype == at::kFloat) CHECK(got.expert_indices.to(at::kCPU).equal(expected.expert_indices));
    const double tol = dtype == at::kFloat ? 1e-4 : 5e-2;
    CHECK((got.out.to(at::kCPU, at::kFloat) - expected.out).abs().max().item<double>() < tol);
    if (dtype == at::kBFloat16) CHECK(vime::moe_block_is_capturable(gpu) == VIME_HAS_GROUPED_MM);
  }
}
