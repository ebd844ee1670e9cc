#include "vime/model/grouped_gemm.hpp"

#include <ATen/ATen.h>

#include <vector>

#include "vime/core/torch_compat.hpp"

#if VIME_HAS_GROUPED_MM && defined(VIME_HAS_CUDA_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#define VIME_FUSED_GROUPED_MM 1
#endif

namespace vime {

bool grouped_linear_is_fused(const at::Tensor& x, const at::Tensor& weight) {
#if defined(VIME_FUSED_GROUPED_MM)
  // The CUTLASS kernel: bf16 on sm90 (Hopper) and later, operand rows 16-byte aligned (in and out
  // multiples of 8); other GPUs get LibTorch's fallback, which may read the offsets on the host.
  return x.is_cuda() && x.scalar_type() == at::kBFloat16 && weight.scalar_type() == at::kBFloat16 &&
         x.dim() == 2 && weight.dim() == 3 && x.size(1) % 8 == 0 && weight.size(1) % 8 == 0 &&
         x.size(0) > 0 && at::cuda::getDeviceProperties(x.device().index())->major >= 9;
#else
  (void)x;
  (void)weight;
  return false;
#endif
}

at::Tensor grouped_linear(const at::Tensor& x, const at::Tensor& weight,
                          const at::Tensor& offsets) {
#if defined(VIME_FUSED_GROUPED_MM)
  if (grouped_linear_is_fused(x, weight)) {
    // mat2 [groups, in, out] with unit stride along `in`: the weight's transpose view as it is.
    return at::_grouped_mm(x.contiguous(), weight.transpose(1, 2), offsets.to(at::kInt));
  }
#endif
  const int64_t groups = weight.size(0);
  auto ends = offsets.to(at::kCPU, at::kLong).contiguous();
  const int64_t* end = ends.data_ptr<int64_t>();
  // unbind, not select: its backward stacks the groups' gradients into one tensor.
  auto per_group = weight.unbind(0);
  std::vector<at::Tensor> parts;
  int64_t begin = 0;
  for (int64_t g = 0; g < groups; ++g) {
    if (end[g] > begin)
      parts.push_back(at::mm(x.narrow(0, begin, end[g] - begin), per_group[g].t()));
    begin = end[g];
  }
  if (parts.empty()) return at::zeros({x.size(0), weight.size(1)}, x.options());
  return parts.size() == 1 ? parts[0] : at::cat(parts, 0);
}

}  // namespace vime
