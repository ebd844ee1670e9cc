// A real trainer-hook plugin (--custom-loss-function-path), built with the public macros as users
// build theirs: SFT written as a custom loss, reading the packed micro-batch's logits itself.
#include <ATen/ATen.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vime/hooks.hpp>
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

// Trainer hooks that record each call in the file named by $VIME_TEST_HOOK_LOG ([train_cli]).
namespace {
void record(const std::string& line) {
  if (const char* path = std::getenv("VIME_TEST_HOOK_LOG")) {
    std::ofstream(path, std::ios::app) << line << "\n";
  }
}
}  // namespace

void init_hook(const vime::Args&) { record("init"); }
void before_log_prob(const vime::Args&, vime::Model&, std::string_view prefix) {
  record("before_log_prob " + std::string(prefix));
}
void before_train_step(const vime::Args&, int64_t rollout_id, int64_t step_id, vime::Model&,
                       vime::Optimizer&, vime::LrScheduler&) {
  record("before_train_step " + std::to_string(rollout_id) + " " + std::to_string(step_id));
}
void rollout_data_postprocess(const vime::Args&, int64_t rollout_id, vime::RolloutData& data) {
  record("rollout_data_postprocess " + std::to_string(rollout_id) + " " +
         std::to_string(data["advantages"].size()));
}
VIME_INIT_HOOK_PLUGIN(init_hook)
VIME_BEFORE_LOG_PROB_HOOK_PLUGIN(before_log_prob)
VIME_BEFORE_TRAIN_STEP_HOOK_PLUGIN(before_train_step)
VIME_ROLLOUT_DATA_POSTPROCESS_PLUGIN(rollout_data_postprocess)
