// The one place where Debian's LibTorch 1.13 (CPU) and PyTorch 2.x's CUDA LibTorch differ for vime.
// Model, train and engine code include this instead of testing versions themselves.
#pragma once

#include <torch/version.h>

#define VIME_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||       \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// Packed variable-length flash attention (at::_flash_attention_forward/_backward with cu_seqlens)
// is declared from 2.1 on; it has kernels only on CUDA, so callers also check tensor.is_cuda().
#if VIME_TORCH_AT_LEAST(2, 1)
#define VIME_HAS_FLASH_VARLEN 1
#else
#define VIME_HAS_FLASH_VARLEN 0
#endif

// at::_fused_adamw_ (multi-tensor AdamW, one kernel over many tensors), CUDA only; its double-lr
// form is stable from 2.1 on.
#if VIME_TORCH_AT_LEAST(2, 1)
#define VIME_HAS_FUSED_ADAMW 1
#else
#define VIME_HAS_FUSED_ADAMW 0
#endif

// at::_fused_rms_norm (one kernel forward, one backward, saving only the input and rstd), CUDA
// only, from 2.8 on.
#if VIME_TORCH_AT_LEAST(2, 8)
#define VIME_HAS_FUSED_RMS_NORM 1
#else
#define VIME_HAS_FUSED_RMS_NORM 0
#endif

// at::_grouped_mm (one CUTLASS grouped GEMM over contiguous row segments, offsets on the device,
// with autograd), CUDA only, from 2.8 on; 2.8 runs it in bf16 on sm90 and needs 16-byte aligned
// rows.
#if VIME_TORCH_AT_LEAST(2, 8)
#define VIME_HAS_GROUPED_MM 1
#else
#define VIME_HAS_GROUPED_MM 0
#endif

namespace vime::compat {

// c10d's collective options (AllreduceOptions, AllgatherOptions, ...): from 2.8 on, asyncOp =
// false runs an NCCL collective on the caller's current CUDA stream, with no side stream, no
// events between the two and no tensors stashed until it ends (also inside a CUDA graph capture);
// older options have no such member and always use NCCL's own stream.
template <class Options>
void run_on_current_stream(Options& options) {
  if constexpr (requires(Options & o) { o.asyncOp; }) options.asyncOp = false;
}

// at::scaled_dot_product_attention is public from 2.0; 1.13 has only the private
// _scaled_dot_product_attention.
inline constexpr bool kHasPublicSdpa = VIME_TORCH_AT_LEAST(2, 0);
inline constexpr bool kHasFlashVarlen = VIME_HAS_FLASH_VARLEN;

// c10d::TCPStore::wait with a timeout: from 2.1 on a timed-out wait is cancelled on the server
// (CANCEL_WAIT). 1.13's client leaves it registered, and the server's late STOP_WAITING then
// answers the client's next call ("Stop_waiting response is expected"), so there a wait that may
// time out polls check() instead.
inline constexpr bool kStoreWaitTimeoutIsSafe = VIME_TORCH_AT_LEAST(2, 1);

}  // namespace vime::compat
