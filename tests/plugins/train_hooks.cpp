// A real trainer-hook plugin (--custom-loss-function-path), built with the public macros as users
// build theirs: SFT written as a custom loss, reading the packed micro-batch's logits itself.
#include <ATen/ATen.h>

#include <vime/train_hooks.hpp>

vime::LossOutput sft_as_custom_loss(const vime::Args& args, const vime::RolloutData& batch,
                                    const at::Tensor& logits,
                                    const vime::SumOfSampleMean& sum_of_sample_mean) {
  (void)args;
  std::vector<at::Tensor> log_probs;
  int64_t start = 0;
  const auto& tokens = batch.at("tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int64_t total = tokens[i].numel();
    const int64_t response = batch.at("response_lengths")[i].item<int64_t>();
    auto rows = logits.narrow(0, start + total - response - 1, response).to(at::kFloat);
    auto targets = tokens[i].narrow(0, total - response, response).to(logits.device());
    log_probs.push_back(at::log_softmax(rows, -1).gather(1, targets.unsqueeze(1)).squeeze(1));
    start += total;
  }
  auto loss = -sum_of_sample_mean(at::cat(log_probs));
  return {loss, {{"custom_calls", at::scalar_tensor(1.0)}}};
}
VIME_LOSS_PLUGIN(sft_as_custom_loss)
