// On the GPU machine (skipped without CUDA): apply_rope through its CUDA kernel (rope_kernel.cu)
// against the rotate-half formula in fp64, values and gradients, for the 16-byte-load shapes
// (head_dim 128, 64) and one that needs the scalar kernel (head_dim 6).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>

#include <catch2/catch.hpp>

#include "vime/model/layers.hpp"

namespace {

bool skip_without_cuda() {
  if (at::hasCUDA()) return false;
  WARN("CUDA is not available here: skipped");
  return true;
}

at::Tensor rope_reference(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  auto rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  auto ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  return (ad - bd).abs().max().item<double>() / std::max(bd.abs().max().item<double>(), 1e-30);
}

}  // namespace

TEST_CASE("the CUDA RoPE kernel equals the rotate-half formula, gradients too",
          "[gpu][model_gpu]") {
  if (skip_without_cuda()) return;
  const at::Device cuda(at::kCUDA);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(23);
  auto f64 = at::TensorOptions().dtype(at::kDouble);
  const int64_t tokens = 300;
  auto positions = (at::arange(tokens, at::TensorOptions().dtype(at::kLong)) * 7 % 4099).to(cuda);
  for (int64_t head_dim : {128, 64, 6}) {
    auto exponents = at::arange(0, head_dim, 2, f64) / double(head_dim);
    auto inv_freq = (1.0 / at::pow(1e6, exponents)).to(cuda, at::kFloat);
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      for (int64_t heads : {16, 3}) {
        CAPTURE(head_dim, dtype, heads);
        auto tables = vime::rope_tables(inv_freq, positions, dtype);
        auto x64 = at::randn({tokens, heads, head_dim}, gen, f64);
        auto g64 = at::randn({tokens, heads, head_dim}, gen, f64);
        auto x = x64.to(cuda, dtype).requires_grad_(true);
        auto out = vime::apply_rope(x, tables);
        CHECK(out.scalar_type() == dtype);
        REQUIRE(out.grad_fn() != nullptr);
        CHECK_THAT(out.grad_fn()->name(), Catch::Contains("FusedRope"));  // the kernel ran
        // The reference sees the same (rounded) inputs and tables, in fp64.
        auto x_ref = x.detach().to(at::kDouble).requires_grad_(true);
        auto ref = rope_reference(x_ref, tables.cos.to(at::kDouble), tables.sin.to(at::kDouble));
        // fp32: a few fp32 roundings; bf16: one rounding of the result (2^-9 relative).
        const double tol = dtype == at::kFloat ? 1e-6 : 8e-3;
        CHECK(relative_error(out, ref) < tol);
        auto g = torch::autograd::grad({out}, {x}, {g64.to(cuda, dtype)});
        auto g_ref = torch::autograd::grad({ref}, {x_ref}, {g64.to(cuda, dtype).to(at::kDouble)});
        CHECK(g[0].scalar_type() == dtype);
        CHECK(relative_error(g[0], g_ref[0]) < tol);
      }
    }
  }
}
