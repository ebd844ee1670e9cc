// The routed experts of a generation on the wire (--use-rollout-routing-replay): vLLM's
// choices[0].routed_experts (base64 of a .npy array of shape (tokens - 1, layers, topk)) and
// SGLang's meta_info.routed_experts (base64 of raw int32, or a list of ints), read as slime reads
// them (slime/utils/misc.py::decode_int32_meta_array).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/json.hpp"

namespace vime::engine {

// Base64 of a .npy file (format 1.0, little-endian int32, C order) of `ids` as [rows, layers,
// topk], rows = ids.size() / (layers * topk).
std::string encode_routed_experts_npy(const std::vector<int32_t>& ids, int64_t layers,
                                      int64_t topk);

// The ids of a routed_experts value, flattened: null -> none; a string -> base64 of a .npy array
// of any integer dtype (C order) or, without the .npy magic, of raw little-endian int32; an array
// -> its ints (nested lists flattened). Throws vime::Error naming `where` for anything else.
std::vector<int32_t> decode_routed_experts(const Json& value, const std::string& where);

}  // namespace vime::engine
