#include "vime/train/routing_replay.hpp"

#include <ATen/ATen.h>

#include <string>

#include "vime/error.hpp"

namespace vime::train {

RoutingReplayOptions RoutingReplayOptions::from(const Args& args) {
  RoutingReplayOptions o;
  o.from_rollout = args.get_bool("use_rollout_routing_replay");
  o.enabled = o.from_rollout || args.get_bool("use_routing_replay");
  return o;
}

RoutingReplay::RoutingReplay(const ModelConfig& config)
    : num_layers_(config.num_layers),
      topk_(config.moe.num_experts_per_tok),
      num_experts_(config.moe.num_experts) {
  for (int64_t l = 0; l < config.num_layers; ++l)
    if (config.is_moe_layer(l)) moe_layers_.push_back(l);
}

void RoutingReplay::reset(size_t samples) { samples_.assign(samples, at::Tensor()); }

void RoutingReplay::load_rollout(const TrainBatch& batch) {
  if (batch.rollout_routed_experts.size() != batch.size()) {
    throw Error(
        "--use-rollout-routing-replay: the train data has no rollout_routed_experts (the rollout "
        "engine must return routed_experts: vime serve and vllm serve with "
        "--enable-return-routed-experts, the embedded engine always)");
  }
  reset(batch.size());
  const auto index = at::tensor(moe_layers_, at::TensorOptions().dtype(at::kLong));
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& flat = batch.rollout_routed_experts[i];
    const auto tokens = static_cast<int64_t>(batch.tokens[i].size());
    const int64_t width = num_layers_ * topk_;
    const int64_t rows = static_cast<int64_t>(flat.size()) / width;
    // Fewer rows: tokens appended after the last generation (a multi-turn tool's answer), which
    // no trainable token follows.
    if (rows == 0 || rows * width != static_cast<int64_t>(flat.size()) || rows > tokens - 1) {
      throw Error("--use-rollout-routing-replay: sample " + std::to_string(i) + " has " +
                  std::to_string(flat.size()) + " routed expert ids; its " +
                  std::to_string(tokens) + " tokens need " + std::to_string(tokens - 1) +
                  " rows x " + std::to_string(num_layers_) + " layers x top-" +
                  std::to_string(topk_));
    }
    auto all = at::tensor(flat, at::TensorOptions().dtype(at::kInt))
                   .view({rows, num_layers_, topk_})
                   .index_select(1, index);
    if (all.numel() > 0 &&
        (all.min().item<int32_t>() < 0 || all.max().item<int32_t>() >= num_experts_)) {
      throw Error("--use-rollout-routing-replay: sample " + std::to_string(i) +
                  " has routed expert ids outside 0.." + std::to_string(num_experts_ - 1));
    }
    samples_[i] =
        at::cat({all, all.narrow(0, rows - 1, 1).expand({tokens - rows, -1, -1})}, 0).contiguous();
  }
}

void RoutingReplay::record(const MicroBatch& mb, const std::vector<int64_t>& lengths,
                           const MoeRouting& routing) {
  if (routing.chosen.size() != moe_layers_.size()) {
    throw Error("routing replay: the forward routed " + std::to_string(routing.chosen.size()) +
                " MoE layers, the model has " + std::to_string(moe_layers_.size()));
  }
  // [Σ tokens, MoE layers, k] on the host in one copy, then cut per sample.
  auto all = at::stack(routing.chosen, 1).to(at::kCPU).to(at::kInt);
  int64_t start = 0;
  for (auto s : mb) {
    samples_.at(s) = all.narrow(0, start, lengths.at(s)).contiguous();
    start += lengths.at(s);
  }
}

std::vector<at::Tensor> RoutingReplay::replay_of(const MicroBatch& mb,
                                                 const at::Device& device) const {
  std::vector<at::Tensor> parts;
  for (auto s : mb) {
    if (!samples_.at(s).defined())
      throw Error("routing replay: sample " + std::to_string(s) + " has no recorded routing");
    parts.push_back(samples_[s]);
  }
  auto all = at::cat(parts, 0).to(device).to(at::kLong);  // [Σ tokens, MoE layers, k]
  std::vector<at::Tensor> layers;
  for (size_t l = 0; l < moe_layers_.size(); ++l)
    layers.push_back(all.select(1, static_cast<int64_t>(l)));
  return layers;
}

}  // namespace vime::train
