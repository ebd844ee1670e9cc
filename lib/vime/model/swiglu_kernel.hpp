// vime's CUDA kernels for the SwiGLU product silu(gate) * up (swiglu_mlp in layers.hpp): forward
// one read of gate and up and one write, backward one read of the gradient, gate and up and one
// write of each input's gradient, instead of ATen's silu + mul and their three backward kernels
// (which also keep silu(gate) alive). Plain pointers and a cudaStream_t passed as void*, so this
// header needs neither ATen nor CUDA; compiled only where LibTorch is a CUDA build
// (VIME_HAS_CUDA_KERNELS).
#pragma once

#include <cstdint>

namespace vime::cuda_kernels {

enum class SwigluType { kFloat, kHalf, kBFloat16 };

// out[i] = silu(gate[i]) * up[i], in fp32, rounded once; n elements, all contiguous.
void swiglu_forward(void* out, const void* gate, const void* up, int64_t n, SwigluType type,
                    void* stream);

// grad_gate[i] = grad[i] * up[i] * silu'(gate[i]), grad_up[i] = grad[i] * silu(gate[i]), with
// silu'(g) = s + g * s * (1 - s), s = sigmoid(g); in fp32, rounded once.
void swiglu_backward(void* grad_gate, void* grad_up, const void* grad, const void* gate,
                     const void* up, int64_t n, SwigluType type, void* stream);

}  // namespace vime::cuda_kernels
