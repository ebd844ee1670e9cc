// The one place where Debian's LibTorch 1.13 (CPU) and PyTorch 2.x's CUDA LibTorch differ for vime.
// Model, train and engine code include this instead of testing versions themselves.
#pragma once

#include <torch/version.h>

#define VIME_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||       \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace vime::compat {

// at::scaled_dot_product_attention is public from 2.0; 1.13 has only the private
// _scaled_dot_product_attention.
inline constexpr bool kHasPublicSdpa = VIME_TORCH_AT_LEAST(2, 0);

}  // namespace vime::compat
