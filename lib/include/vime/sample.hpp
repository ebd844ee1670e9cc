// vime::Sample: one prompt and its response as it moves through rollout, reward, filter and
// training (slime/utils/types.py::Sample). Plain data: copy it, move it, serialise it with
// to_json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vime/json.hpp"

namespace vime {

class Args;

enum class SampleStatus { kPending, kCompleted, kTruncated, kAborted, kFailed };
const char* to_string(SampleStatus status);  // "pending", "completed", ...
SampleStatus sample_status_from_string(
    std::string_view text);  // throws vime::Error on unknown text

struct SpecInfo {
  int64_t accept_tokens = 0;
  int64_t draft_tokens = 0;
  int64_t verify_ct = 0;
  int64_t completion_tokens = 0;
};

struct PrefixCacheInfo {
  int64_t cached_tokens = 0;
  int64_t total_prompt_tokens = 0;
};

struct Sample {
  // Identity and prompt
  std::optional<int64_t> group_index;
  std::optional<int64_t> index;
  std::optional<int64_t> rollout_id;  // samples sharing it form one rollout (multi-agent splits)
  Json prompt = "";                   // a string, or a list of chat messages
  std::vector<int32_t> tokens;        // [prompt_len + response_length]
  Json multimodal_inputs;
  Json multimodal_train_inputs;
  Json apply_chat_template_kwargs = Json::object();

  // Response
  std::string response;
  int64_t response_length = 0;
  Json label;
  Json reward;                                    // null (None), a number, or an object
  std::optional<std::vector<int32_t>> loss_mask;  // [response_length]; 1 = trained on
  std::vector<std::string> weight_versions;
  std::optional<std::vector<float>> rollout_log_probs;  // [response_length], post-temperature
  std::vector<int32_t> rollout_top_p_token_ids;         // [sum of kept tokens]
  std::vector<int32_t> rollout_top_p_offsets;           // [response_length + 1]
  std::vector<int32_t> rollout_routed_experts;          // [rows * layers * topk], flattened
  bool remove_sample = false;
  std::optional<std::vector<float>> teacher_log_probs;  // [response_length]

  // Status and metadata
  SampleStatus status = SampleStatus::kPending;
  Json metadata = Json::object();
  std::string generate_function_path;  // per-sample override of --custom-generate-function-path
  std::string custom_rm_path;          // per-sample override of --custom-rm-path
  Json train_metadata;
  std::string session_id;
  double non_generation_time = 0.0;
  SpecInfo spec_info;
  PrefixCacheInfo prefix_cache_info;
  Json extra = Json::object();  // keys from_json did not know (slime keeps them as attributes)

  // reward[reward_key] when --reward-key is set, else the reward itself, as a number.
  double get_reward_value(const Args& args) const;
  // Σ loss_mask, or response_length when there is no mask.
  int64_t effective_response_length() const;
  // Appends response tokens. Trainable tokens need one log-prob each and get mask 1; others get
  // mask 0 and log-prob 0.0. Keeps top-p offsets, response and response_length in step.
  void append_response_tokens(const std::vector<int32_t>& new_tokens,
                              const std::vector<float>& log_probs, bool trainable,
                              std::string_view text = {});
  // slime's finish_reason mapping: length -> TRUNCATED, abort -> ABORTED, stop -> COMPLETED; other
  // values leave the status unchanged.
  void set_status_from_finish_reason(std::string_view finish_reason);

  Json to_json() const;  // status as its string, like slime's to_dict
  static Sample from_json(const Json& json);
};

}  // namespace vime
