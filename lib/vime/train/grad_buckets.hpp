// The layout of the main-grad buckets (Megatron's DDP grad buffer): parameters in reverse order,
// as backward produces their gradients, packed end to end into flat fp32 buckets of about
// `bucket_elements` each; a bucket holds one parameter dtype only and is padded to a multiple of
// the data-parallel size, so that ZeRO-1 gives each rank one contiguous shard of it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vime {

struct GradBucketLayout {
  std::vector<size_t> params;    // indices into the parameter list, in bucket order
  std::vector<int64_t> offsets;  // each parameter's first element in the bucket
  int64_t numel = 0;             // padded: divides by the world size
};

std::vector<GradBucketLayout> plan_grad_buckets(const std::vector<at::Tensor>& params,
                                                int64_t bucket_elements, int64_t world_size);

}  // namespace vime
