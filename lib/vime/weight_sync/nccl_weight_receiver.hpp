// The NCCL backend of `vime serve`'s weight transfer (vLLM's NCCL backend): joins the trainer's
// communicator (unique-id or TCPStore rendezvous) and receives its broadcasts into the model.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>

#include "vime/json.hpp"
#include "vime/weight_sync/transfer_protocol.hpp"
#include "vime/weight_sync/weight_receiver.hpp"

namespace vime::weight_sync {

class NcclCommunicator;

class NcclWeightReceiver : public WeightReceiver {
 public:
  // See make_nccl_weight_receiver.
  explicit NcclWeightReceiver(const Json& transfer_config);
  ~NcclWeightReceiver() override;

  std::string backend() const override { return "nccl"; }
  // Joins at rank init_info.rank_offset (one receiving rank per server: TP = PP = DP = 1) and
  // runs the warm-up all-reduce. A second init replaces (aborts) the first communicator.
  void init(const Json& init_info) override;
  // Receives every listed tensor (one broadcast each, or packed buffers split by
  // prod(shape) * itemsize) and copies it into the parameter of that HF name; vocab-padded
  // embedding/lm_head get the first rows. Names or shapes the model lacks are received, dropped
  // and reported in one vime::Error after the round (the broadcast sequence stays in step).
  void update(const Json& update_info, Model& model) override;

  // For benchmarks: the communicator (null before init).
  NcclCommunicator* communicator() { return comm_.get(); }
  double timeout_s() const { return timeout_s_; }

 private:
  at::Device device_{at::kCPU};
  double timeout_s_ = 900;
  NcclInitInfo info_;
  std::unique_ptr<NcclCommunicator> comm_;
};

// `transfer_config` is --weight-transfer-config's JSON ({"backend": "nccl", ...}); optional keys:
// "device" (the CUDA device the model lives on; default the current CUDA device) and
// "timeout_sec" (how long init and each update may take; default 900). Throws vime::Error when
// this build or machine cannot do NCCL (no CUDA device, no libnccl).
std::unique_ptr<WeightReceiver> make_nccl_weight_receiver(const Json& transfer_config);

}  // namespace vime::weight_sync
