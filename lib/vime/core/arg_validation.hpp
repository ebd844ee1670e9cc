// slime's argument validation (slime_validate_args) and the values it derives, plus vime's
// own checks: unsupported settings and input paths that do not exist.
#pragma once

#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::core {

struct ValidationOptions {
  bool check_paths =
      true;  // refuse input paths (checkpoints, data) that do not exist on this machine
};

// Fills derived values (eps_clip_high, over_sampling_batch_size, offload flags under --colocate,
// ...) and throws UsageError naming every problem in one line. Returns warnings to print.
std::vector<std::string> validate_args(Args& args, const ValidationOptions& options = {});

// "path@[a:b]" -> "path" (slime's row-slice suffix).
std::string strip_row_slice(const std::string& path);

}  // namespace vime::core
