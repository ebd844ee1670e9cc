// Trainer -> engine replica inside one process (vime train --rollout-num-gpus K without
// --colocate): the trainer's parameters copied into a replica's same-named tensors on another
// device, in the packed buckets the vLLM sender broadcasts (plan_packed_chunks, pack_chunk): each
// bucket is packed on the source device, moved in one copy (a CUDA peer copy over NVLink/PCIe
// between GPUs; a memcpy for a CPU copy standing for another device) and unpacked into the
// destination tensors there.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vime::weight_sync {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

struct DeviceCopyStats {
  int64_t bytes = 0;    // parameter bytes moved
  int64_t buckets = 0;  // packed transfers
  double seconds = 0;   // wall time, both devices synchronised at the end
};

// Copies `src` into `dst` (same names, shapes and dtypes, in the same order; `dst` contiguous)
// through buckets of about `bucket_bytes`. Throws vime::Error naming the first tensor that does
// not match. Returns once every copy has landed.
DeviceCopyStats copy_weights_packed(const NamedTensors& src, const NamedTensors& dst,
                                    int64_t bucket_bytes);

// The same bytes as one raw copy per tensor (no packing): the bar the packed copy is measured
// against (tools/weight_transfer_bench --in-process).
DeviceCopyStats copy_weights_raw(const NamedTensors& src, const NamedTensors& dst);

// Waits for the work queued on `device` (no-op on the CPU).
void synchronize_device(const at::Device& device);

}  // namespace vime::weight_sync
