#include "engine/engine_fixtures.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "common/model_presets.hpp"

namespace vime::test {

std::unique_ptr<Model> tiny_engine_model(at::ScalarType dtype, const at::Device& device,
                                         int64_t max_positions, uint64_t seed) {
  auto model =
      std::make_unique<Model>(presets::tiny_qwen3_real_vocab(max_positions), dtype, device, seed);
  at::NoGradGuard no_grad;
  for (auto& [name, t] : model->named_parameters())
    if (name == "lm_head.weight") t.mul_(40.0);
  return model;
}

std::vector<int32_t> greedy_reference(Model& model, const std::vector<int32_t>& prompt,
                                      int64_t new_tokens) {
  at::NoGradGuard no_grad;
  std::vector<int64_t> sequence(prompt.begin(), prompt.end());
  std::vector<int32_t> out;
  for (int64_t i = 0; i < new_tokens; ++i) {
    auto logits = model.forward(PackedBatch::pack({sequence}, model.device()));
    const auto next = logits[-1].argmax().item<int64_t>();
    out.push_back(static_cast<int32_t>(next));
    sequence.push_back(next);
  }
  return out;
}

std::vector<float> reference_log_probs(Model& model, const std::vector<int32_t>& prompt,
                                       const std::vector<int32_t>& output, double temperature) {
  at::NoGradGuard no_grad;
  std::vector<int64_t> sequence(prompt.begin(), prompt.end());
  sequence.insert(sequence.end(), output.begin(), output.end());
  auto logits = model.forward(PackedBatch::pack({sequence}, model.device())).to(at::kFloat);
  auto log_p = at::log_softmax(logits / temperature, -1).to(at::kCPU);
  std::vector<float> out;
  for (size_t i = 0; i < output.size(); ++i)
    out.push_back(log_p[static_cast<int64_t>(prompt.size() + i - 1)][output[i]].item<float>());
  return out;
}

GenerateRequest make_request(std::vector<int32_t> prompt, int64_t max_new_tokens,
                             double temperature, int64_t seed) {
  GenerateRequest request;
  request.input_ids = std::move(prompt);
  request.sampling_params.max_new_tokens = max_new_tokens;
  request.sampling_params.temperature = temperature;
  if (seed >= 0) request.sampling_params.seed = seed;
  return request;
}

}  // namespace vime::test
