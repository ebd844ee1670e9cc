// Sampling parameters of one generate request (slime's sampling_params; vLLM's SamplingParams
// subset).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vime/json.hpp"

namespace vime {

struct SamplingParams {
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = -1;  // -1: no top-k
  int64_t max_new_tokens = 0;
  int64_t min_new_tokens = 0;
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  bool skip_special_tokens = false;
  bool no_stop_trim = true;  // keep the stop string in the output (slime's default)
  bool spaces_between_special_tokens = false;
  std::optional<int64_t> seed;  // per-request seed (deterministic inference)
  double repetition_penalty = 1.0;
  Json extra = Json::object();  // engine-specific fields, forwarded as given
};

}  // namespace vime
