// Under UBSan (tests/sanitize/torch): the tiny Qwen3, Qwen2, Llama 3, GLM-4 and GLM-4.5 goldens
// load, give the reference logits, and train two AdamW steps through activation recompute; a bf16
// copy runs its forward. Exits 1 on a wrong or non-finite result; UBSan ends the process on
// undefined behaviour.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/model/model.hpp"
#include "vime/model/moe.hpp"
#include "vime/train/optimizer.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s tests/model/golden\n", argv[0]);
    return 2;
  }
  const std::string golden = argv[1];
  const std::vector<std::vector<int64_t>> seqs{
      {1, 5, 9, 17, 33}, {2, 4, 8, 16, 32, 64, 95, 3, 7}, {90, 91, 92}};
  int failed = 0;
  for (const char* name :
       {"tiny_qwen3", "tiny_qwen2", "tiny_llama", "tiny_glm4", "tiny_glm4_moe"}) {
    const std::string dir = golden + "/" + name;
    auto model = vime::ckpt::load_hf_model(dir, at::kFloat, at::kCPU);
    vime::ckpt::SafetensorsFile reference(dir + "/logits.safetensors");
    double diff = 0;
    {
      at::NoGradGuard no_grad;
      const auto logits = model->forward(vime::PackedBatch::pack(seqs, at::kCPU));
      diff = (logits.narrow(-1, 0, 96) - reference.get("logits")).abs().max().item<double>();
    }
    model->set_recompute({.enabled = true});
    vime::NamedTensorList trained;  // not the routers' fixed correction biases
    for (const auto& [n, t] : model->named_parameters())
      if (!vime::is_expert_bias(n)) trained.emplace_back(n, t);
    vime::Optimizer optimizer(trained, vime::OptimizerConfig{});
    double norm = 0;
    for (int step = 0; step < 2; ++step) {
      model->forward(vime::PackedBatch::pack(seqs, at::kCPU))
          .log_softmax(-1)
          .mean()
          .neg()
          .backward();
      optimizer.accumulate_grads();
      norm = optimizer.step(1e-3).grad_norm;
      optimizer.zero_grad();
    }
    auto bf16 = vime::ckpt::load_hf_model(dir, at::kBFloat16, at::kCPU);
    at::NoGradGuard no_grad;
    const bool finite =
        bf16->forward(vime::PackedBatch::pack(seqs, at::kCPU)).isfinite().all().item<bool>();
    const bool ok = diff < 1e-4 && std::isfinite(norm) && norm > 0 && finite;
    std::printf("%s: logits %.3g from the reference, grad norm %.4g, bf16 forward %s: %s\n", name,
                diff, norm, finite ? "finite" : "NOT finite", ok ? "ok" : "FAILED");
    failed += !ok;
  }
  return failed == 0 ? 0 : 1;
}
