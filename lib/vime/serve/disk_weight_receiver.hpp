// The "disk" weight-transfer backend of `vime serve` (vLLM's disk backend):
// init_info is {}, update_info is {"path": "/abs/hf_dir"}, an HF safetensors directory whose
// tensors replace the model's. Also the loader behind /collective_rpc reload_weights.
#pragma once

#include <filesystem>
#include <string>

#include "vime/weight_sync/weight_receiver.hpp"

namespace vime::serve {

class DiskWeightReceiver final : public weight_sync::WeightReceiver {
 public:
  std::string backend() const override { return "disk"; }
  void init(const Json& init_info) override;
  void update(const Json& update_info, Model& model) override;
};

// Reads every tensor of the HF safetensors directory `dir` and checks that it holds each of
// `model`'s parameters with the right shape before copying any of them in, so a bad directory
// throws vime::Error (naming it and the tensor) and leaves the old weights intact.
void load_hf_weights(const std::filesystem::path& dir, Model& model);

}  // namespace vime::serve
