// The embedded backend disaggregated (--rollout-num-gpus K without --colocate, and every --async
// run on the embedded backend): K NativeEngine replicas in the trainer's process, each on its own
// copy of the model on the K GPUs after the trainer's (cuda:d+1 .. cuda:d+K; on the CPU, K CPU
// copies stand for other devices). They keep generating while the trainer trains; a weight update
// pauses them (requests in flight are held, not dropped), copies the trainer's parameters device to
// device in packed buckets (weight_sync::copy_weights_packed), tags the new version and resumes
// them, so a request that spans the update finishes with the new weights.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "vime/loop/rollout_backend.hpp"

namespace vime::loop {

// Where the replicas go: cuda:(trainer + 1 + i) for a CUDA trainer, the CPU for a CPU one. Throws
// UsageError naming --rollout-num-gpus when the GPUs after the trainer's are too few.
std::vector<c10::Device> replica_devices(const c10::Device& trainer, int64_t count,
                                         int64_t visible_gpus);

// `model` is the trainer's; it and `tokenizer` must outlive the backend. The replicas start with
// its weights as `version`.
std::unique_ptr<RolloutBackend> make_replica_backend(const Args& args, Model& model,
                                                     const Tokenizer* tokenizer, int64_t version,
                                                     int64_t count, std::ostream& console);

}  // namespace vime::loop
