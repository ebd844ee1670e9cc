// The NCCL backend of `vime serve`'s weight transfer (vllm_api.md §4.5, §5): joins the trainer's
// communicator (unique-id or TCPStore rendezvous) and receives its broadcasts.
#pragma once

#include <memory>

#include "vime/json.hpp"
#include "vime/serve/weight_receiver.hpp"

namespace vime::weight_sync {

// `transfer_config` is --weight-transfer-config's JSON ({"backend": "nccl", ...}). Throws
// vime::Error when this build or machine cannot do NCCL (no CUDA device, no libnccl).
std::unique_ptr<serve::WeightReceiver> make_nccl_weight_receiver(const Json& transfer_config);

}  // namespace vime::weight_sync
