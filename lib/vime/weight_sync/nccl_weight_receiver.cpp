// Placeholder until the NCCL receiver lands (it replaces this file).
#include "vime/weight_sync/nccl_weight_receiver.hpp"

#include "vime/error.hpp"

namespace vime::weight_sync {

std::unique_ptr<serve::WeightReceiver> make_nccl_weight_receiver(const Json&) {
  throw Error("--weight-transfer-config: the nccl backend is not in this build yet; use "
              "{\"backend\": \"disk\"}");
}

}  // namespace vime::weight_sync
