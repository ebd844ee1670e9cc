// How many decoder layers activation recompute has run again in this process (each backward of a
// recomputed layer counts one): what shows that --recompute-granularity full took effect.
#pragma once

#include <cstdint>

namespace vime {

int64_t recomputed_layers();

}  // namespace vime
