// One weight-transfer backend of `vime serve` (vLLM's --weight-transfer-config {"backend": ...}):
// the receiving end of the trainer's weight updates, driven by the routes
// /init_weight_transfer_engine and /update_weights (lib/vime/serve/weight_routes.cpp), which also
// run the start/finish phases and keep the engine paused while tensors land in the model. Declared
// here, below serve/, so weight_sync's NCCL receiver needs nothing from serve/ (its disk receiver
// lives there).
#pragma once

#include <string>

#include "vime/json.hpp"

namespace vime {
class Model;
}

namespace vime::weight_sync {

class WeightReceiver {
 public:
  virtual ~WeightReceiver() = default;
  virtual std::string backend() const = 0;  // "nccl" | "disk"
  // /init_weight_transfer_engine {"init_info": ...}: returns once the channel is up (NCCL: every
  // rank joined and the warm-up all-reduce ran). Throws vime::Error on a bad init_info.
  virtual void init(const Json& init_info) = 0;
  // /update_weights {"update_info": ...}: receives the tensors update_info lists and copies each
  // into the model parameter of that HF name. The caller holds the engine paused.
  virtual void update(const Json& update_info, Model& model) = 0;
};

}  // namespace vime::weight_sync
