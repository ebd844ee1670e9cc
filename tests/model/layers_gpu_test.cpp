// On the GPU machine (skipped without CUDA): the decoder layer's pieces that run as vime's CUDA
// kernels against their formulas in fp64, values and gradients: apply_rope (rope_kernel.cu) for the
// 16-byte-load shapes (head_dim 128, 64) and one that needs the scalar kernel (head_dim 6), and
// swiglu_mlp's silu(gate) * up (swiglu_kernel.cu) for both kinds of shape; rms_norm
// (rms_norm_kernel.cu) against the ATen formula the CPU runs, for the shapes the train step gives
// it (hidden 1024/2560/4096, q/k norms over head_dim 128) and a row the scalar kernel takes.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>

#include <catch2/catch.hpp>
#include <deque>
#include <string>

#include "support/skip.hpp"
#include "vime/model/layers.hpp"

namespace {

at::Tensor rope_reference(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  auto rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

// Whether out's autograd graph has a node whose name contains `name` (a kernel's Function ran).
bool graph_has(const at::Tensor& out, const std::string& name) {
  std::deque<torch::autograd::Node*> queue{out.grad_fn().get()};
  for (int visited = 0; !queue.empty() && visited < 64; ++visited) {
    auto* node = queue.front();
    queue.pop_front();
    if (node == nullptr) continue;
    if (node->name().find(name) != std::string::npos) return true;
    for (const auto& edge : node->next_edges()) queue.push_back(edge.function.get());
  }
  return false;
}

// layers.cpp's ATen path (the CPU's): normalize in fp32, round to x's dtype, scale in it.
at::Tensor rms_norm_reference(const at::Tensor& x, const at::Tensor& weight, double eps) {
  auto x32 = x.to(at::kFloat);
  auto normalized = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normalized.to(x.scalar_type());
}

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  auto ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  return (ad - bd).abs().max().item<double>() / std::max(bd.abs().max().item<double>(), 1e-30);
}

}  // namespace

TEST_CASE("the CUDA RoPE kernel equals the rotate-half formula, gradients too",
          "[gpu][model_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
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
        CHECK(graph_has(out, "FusedRope"));  // the kernel ran
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

TEST_CASE("the CUDA SwiGLU kernel equals silu(gate) * up, gradients too", "[gpu][model_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(29);
  auto f64 = at::TensorOptions().dtype(at::kDouble);
  // 64 -> 64 -> 64: 16-byte loads; 6 -> 7 -> 5 (42 elements a row): the scalar kernel.
  for (auto dims : {std::vector<int64_t>{64, 64, 64}, std::vector<int64_t>{6, 7, 5}}) {
    const int64_t tokens = 301, hidden = dims[0], inter = dims[1], out_dim = dims[2];
    auto x64 = at::randn({tokens, hidden}, gen, f64) * 2;
    auto gate64 = at::randn({inter, hidden}, gen, f64) / std::sqrt(double(hidden));
    auto up64 = at::randn({inter, hidden}, gen, f64) / std::sqrt(double(hidden));
    auto down64 = at::randn({out_dim, inter}, gen, f64) / std::sqrt(double(inter));
    auto g64 = at::randn({tokens, out_dim}, gen, f64);
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      CAPTURE(hidden, inter, dtype);
      std::vector<at::Tensor> in, ref_in;
      for (const auto& t : {x64, gate64, up64, down64}) {
        in.push_back(t.to(cuda, dtype).requires_grad_(true));
        ref_in.push_back(in.back().detach().to(at::kDouble).requires_grad_(true));
      }
      auto out = vime::swiglu_mlp(in[0], in[1], in[2], in[3]);
      CHECK(graph_has(out, "FusedSwiglu"));  // the kernel ran
      auto ref = at::linear(
          at::silu(at::linear(ref_in[0], ref_in[1])) * at::linear(ref_in[0], ref_in[2]), ref_in[3]);
      // fp32: fp32 GEMMs; bf16: gate, up and their product rounded to bf16, bf16 GEMMs.
      const double tol = dtype == at::kFloat ? 1e-5 : 2e-2;
      CHECK(relative_error(out, ref) < tol);
      auto g = torch::autograd::grad({out}, in, {g64.to(cuda, dtype)});
      auto g_ref = torch::autograd::grad({ref}, ref_in, {g64.to(cuda, dtype).to(at::kDouble)});
      for (size_t i = 0; i < in.size(); ++i) {
        CAPTURE(i);
        CHECK(relative_error(g[i], g_ref[i]) < tol);
      }
    }
  }
}

TEST_CASE("the CUDA RMSNorm kernel equals the ATen formula, gradients too", "[gpu][model_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(31);
  auto f64 = at::TensorOptions().dtype(at::kDouble);
  const double eps = 1e-6;
  // Layer norms (odd row counts), Qwen3's q/k norms ([tokens, heads, head_dim 128], one with more
  // rows than the backward has warps), a row of 6 (the scalar kernel).
  const std::vector<std::vector<int64_t>> shapes{{301, 1024},   {3, 2560},      {301, 4096},
                                                 {77, 16, 128}, {4099, 8, 128}, {5, 6}};
  for (const auto& shape : shapes) {
    const int64_t dim = shape.back();
    auto x64 = at::randn(shape, gen, f64) * 3;
    auto w64 = 1 + at::randn({dim}, gen, f64) / 4;
    auto g64 = at::randn(shape, gen, f64);
    for (auto dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
      CAPTURE(shape, dtype);
      auto x = x64.to(cuda, dtype).requires_grad_(true);
      auto w = w64.to(cuda, dtype).requires_grad_(true);
      auto out = vime::rms_norm(x, w, eps);
      CHECK(out.scalar_type() == dtype);
      CHECK(out.sizes() == x.sizes());
      REQUIRE(out.grad_fn() != nullptr);
      CHECK(graph_has(out, "FusedRmsNorm"));  // the kernel ran
      auto x_ref = x.detach().requires_grad_(true), w_ref = w.detach().requires_grad_(true);
      auto ref = rms_norm_reference(x_ref, w_ref, eps);
      // fp32: sums in another order; bf16/fp16: the same two roundings, an ulp where rstd's
      // last bit differs, and (gradients) ATen's bf16 grad * weight and grad * n products.
      const double tol = dtype == at::kFloat ? 1e-5 : 2e-2;
      CHECK(relative_error(out, ref) < (dtype == at::kFloat ? 1e-6 : 1e-2));
      auto g = g64.to(cuda, dtype);
      auto grads = torch::autograd::grad({out}, {x, w}, {g}, /*retain_graph=*/true);
      auto grads_ref = torch::autograd::grad({ref}, {x_ref, w_ref}, {g});
      CHECK(grads[0].scalar_type() == dtype);
      CHECK(grads[1].scalar_type() == dtype);
      CHECK(relative_error(grads[0], grads_ref[0]) < tol);
      CHECK(relative_error(grads[1], grads_ref[1]) < tol);
      // The weight's gradient is summed in a fixed order: the same bits again.
      auto again = torch::autograd::grad({out}, {x, w}, {g});
      CHECK(at::equal(again[1], grads[1]));
      CHECK(at::equal(again[0], grads[0]));
      // Without autograd (the engine, log-prob passes): the same forward kernel.
      at::NoGradGuard no_grad;
      auto plain = vime::rms_norm(x, w, eps);
      CHECK(plain.grad_fn() == nullptr);
      CHECK(at::equal(plain, out.detach()));
    }
  }
}
