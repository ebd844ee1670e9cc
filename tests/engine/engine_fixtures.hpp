// Shared by the NativeEngine tests: a tiny random Qwen3-shaped model with the real Qwen3
// vocabulary (so stop strings decode with the real tokenizer) and references computed with the
// uncached full forward.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "vime/engine_client.hpp"
#include "vime/model/model.hpp"

namespace vime::test {

inline constexpr int32_t kQwenImEnd = 151645;

// 2 layers, hidden 64, 4 heads / 2 KV heads of 16, vocabulary 151936; the output layer is scaled
// up so that next-token distributions are peaked (as a trained model's are) rather than ~uniform.
std::unique_ptr<Model> tiny_engine_model(at::ScalarType dtype, const at::Device& device,
                                         int64_t max_positions = 1024, uint64_t seed = 7);

// Greedy continuation by argmax over the full uncached forward, one token at a time.
std::vector<int32_t> greedy_reference(Model& model, const std::vector<int32_t>& prompt,
                                      int64_t new_tokens);
// log_softmax(logits / temperature) of the full forward at each output token.
std::vector<float> reference_log_probs(Model& model, const std::vector<int32_t>& prompt,
                                       const std::vector<int32_t>& output, double temperature);

GenerateRequest make_request(std::vector<int32_t> prompt, int64_t max_new_tokens,
                             double temperature = 0.0, int64_t seed = -1);

}  // namespace vime::test
