// vime's CUDA kernel for the sampler's common path (engine::sample_tokens on a CUDA build): one
// pass over each row's logits for the softmax statistics and the argmax, a second one, for rows
// that sample, for the inverse-CDF draw in token-id order. Nothing is sorted and nothing of the
// vocabulary's size is written. Plain pointers and a cudaStream_t passed as void*, so this header
// needs neither ATen nor CUDA; compiled only where LibTorch is a CUDA build
// (VIME_HAS_CUDA_KERNELS).
#pragma once

#include <cstdint>

#include "vime/model/paged_decode_kernel.hpp"  // ElementType

namespace vime::cuda_kernels {

// Per row b (z = logits[b] / temperature, in fp32 as ATen computes it):
//   masked:  the tokens mask_tokens[mask_offsets[b] .. mask_offsets[b + 1]) (min_new_tokens);
//   kept:    unmasked tokens with z >= thresholds[b] (the filters' cut; thresholds may be null:
//            every unmasked token);
//   token:   greedy[b] ? the first argmax of the unmasked z
//                      : the first token whose running sum of exp(z - max) over kept tokens, in
//                        token-id order (fp64), exceeds uniforms[b] times the kept total;
//   log_prob: processed ? z[token] - logsumexp(kept z) : z[token] - logsumexp(all z).
// `params` (device, fp64, one buffer so that it reaches the device in one copy) holds, in order:
// uniforms[batch], temperatures[batch], greedy flags[batch], mask_offsets[batch + 1], then the
// mask_tokens. A row with nothing to sample (NaN logits, every token masked) gets a non-finite
// log-prob.
struct SamplingLaunch {
  const void* logits = nullptr;
  int64_t row_stride = 0;  // elements between rows
  int batch = 0;
  int vocab = 0;
  ElementType type = ElementType::kFloat;
  const double* params = nullptr;
  const float* thresholds = nullptr;  // [batch] or null
  bool processed = false;
  int32_t* tokens = nullptr;   // [batch] out
  float* log_probs = nullptr;  // [batch] out
};

void sample_rows(const SamplingLaunch& launch, void* stream);

}  // namespace vime::cuda_kernels
