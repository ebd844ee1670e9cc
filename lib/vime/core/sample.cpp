#include "vime/sample.hpp"

#include "vime/args.hpp"
#include "vime/error.hpp"

namespace vime {
namespace {

template <class T>
Json to_json_list(const std::vector<T>& values) {
  Json out = Json::array();
  for (const auto& v : values)
    out.push_back(
        Json(static_cast<std::conditional_t<std::is_floating_point_v<T>, double, int64_t>>(v)));
  return out;
}

template <class T>
std::vector<T> from_json_list(const Json& j) {
  std::vector<T> out;
  if (j.is_null()) return out;
  out.reserve(j.size());
  for (const auto& e : j.as_array()) {
    if constexpr (std::is_floating_point_v<T>) {
      out.push_back(static_cast<T>(e.as_double()));
    } else {
      out.push_back(static_cast<T>(e.as_int()));
    }
  }
  return out;
}

Json optional_int(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(); }

}  // namespace

const char* to_string(SampleStatus status) {
  switch (status) {
    case SampleStatus::kPending:
      return "pending";
    case SampleStatus::kCompleted:
      return "completed";
    case SampleStatus::kTruncated:
      return "truncated";
    case SampleStatus::kAborted:
      return "aborted";
    case SampleStatus::kFailed:
      return "failed";
  }
  return "pending";
}

SampleStatus sample_status_from_string(std::string_view text) {
  for (auto s : {SampleStatus::kPending, SampleStatus::kCompleted, SampleStatus::kTruncated,
                 SampleStatus::kAborted, SampleStatus::kFailed}) {
    if (text == to_string(s)) return s;
  }
  throw Error("unknown sample status '" + std::string(text) +
              "' (expected pending, completed, truncated, aborted or failed)");
}

double Sample::get_reward_value(const Args& args) const {
  if (args.has("reward_key") && args.is_set("reward_key")) {
    std::string key = args.get_string("reward_key");
    if (!reward.is_object()) {
      throw Error("--reward-key " + key + " is set, but the reward is " +
                  std::string(reward.type_name()) + ", not an object");
    }
    const Json* v = reward.find(key);
    if (v == nullptr)
      throw Error("--reward-key " + key + ": the reward has no key '" + key +
                  "': " + reward.dump());
    return v->as_double();
  }
  if (reward.is_null())
    throw Error("sample " + std::to_string(index.value_or(-1)) + " has no reward");
  return reward.as_double();
}

int64_t Sample::effective_response_length() const {
  if (!loss_mask) return response_length;
  int64_t sum = 0;
  for (auto m : *loss_mask) sum += m;
  return sum;
}

void Sample::append_response_tokens(const std::vector<int32_t>& new_tokens,
                                    const std::vector<float>& log_probs, bool trainable,
                                    std::string_view text) {
  if (trainable && log_probs.size() != new_tokens.size()) {
    throw Error("append_response_tokens: " + std::to_string(new_tokens.size()) +
                " trainable tokens need as many "
                "log-probs, got " +
                std::to_string(log_probs.size()));
  }
  const auto count = static_cast<int64_t>(new_tokens.size());
  if (!loss_mask) loss_mask = std::vector<int32_t>(static_cast<size_t>(response_length), 1);
  if (!rollout_log_probs)
    rollout_log_probs = std::vector<float>(static_cast<size_t>(response_length), 0.0f);
  tokens.insert(tokens.end(), new_tokens.begin(), new_tokens.end());
  loss_mask->insert(loss_mask->end(), new_tokens.size(), trainable ? 1 : 0);
  if (trainable) {
    rollout_log_probs->insert(rollout_log_probs->end(), log_probs.begin(), log_probs.end());
  } else {
    rollout_log_probs->insert(rollout_log_probs->end(), new_tokens.size(), 0.0f);
  }
  // Top-p offsets have one entry per response token plus one; appended tokens keep nothing.
  if (!rollout_top_p_offsets.empty()) {
    rollout_top_p_offsets.insert(rollout_top_p_offsets.end(), new_tokens.size(),
                                 rollout_top_p_offsets.back());
  }
  response_length += count;
  response.append(text);
}

void Sample::set_status_from_finish_reason(std::string_view finish_reason) {
  if (finish_reason == "length")
    status = SampleStatus::kTruncated;
  else if (finish_reason == "abort")
    status = SampleStatus::kAborted;
  else if (finish_reason == "stop")
    status = SampleStatus::kCompleted;
}

Json Sample::to_json() const {
  Json j = extra.is_object() ? extra : Json::object();
  j["group_index"] = optional_int(group_index);
  j["index"] = optional_int(index);
  j["rollout_id"] = optional_int(rollout_id);
  j["prompt"] = prompt;
  j["tokens"] = to_json_list(tokens);
  j["multimodal_inputs"] = multimodal_inputs;
  j["multimodal_train_inputs"] = multimodal_train_inputs;
  j["apply_chat_template_kwargs"] = apply_chat_template_kwargs;
  j["response"] = response;
  j["response_length"] = response_length;
  j["label"] = label;
  j["reward"] = reward;
  j["loss_mask"] = loss_mask ? to_json_list(*loss_mask) : Json();
  j["weight_versions"] = Json(weight_versions);
  j["rollout_log_probs"] = rollout_log_probs ? to_json_list(*rollout_log_probs) : Json();
  j["rollout_top_p_token_ids"] =
      rollout_top_p_token_ids.empty() ? Json() : to_json_list(rollout_top_p_token_ids);
  j["rollout_top_p_offsets"] =
      rollout_top_p_offsets.empty() ? Json() : to_json_list(rollout_top_p_offsets);
  j["rollout_routed_experts"] =
      rollout_routed_experts.empty() ? Json() : to_json_list(rollout_routed_experts);
  j["remove_sample"] = remove_sample;
  j["teacher_log_probs"] = teacher_log_probs ? to_json_list(*teacher_log_probs) : Json();
  j["status"] = to_string(status);
  j["metadata"] = metadata;
  j["generate_function_path"] =
      generate_function_path.empty() ? Json() : Json(generate_function_path);
  j["custom_rm_path"] = custom_rm_path.empty() ? Json() : Json(custom_rm_path);
  j["train_metadata"] = train_metadata;
  j["session_id"] = session_id.empty() ? Json() : Json(session_id);
  j["non_generation_time"] = non_generation_time;
  Json spec = Json::object();
  spec["accept_tokens"] = spec_info.accept_tokens;
  spec["draft_tokens"] = spec_info.draft_tokens;
  spec["verify_ct"] = spec_info.verify_ct;
  spec["completion_tokens"] = spec_info.completion_tokens;
  j["spec_info"] = spec;
  Json cache = Json::object();
  cache["cached_tokens"] = prefix_cache_info.cached_tokens;
  cache["total_prompt_tokens"] = prefix_cache_info.total_prompt_tokens;
  j["prefix_cache_info"] = cache;
  return j;
}

Sample Sample::from_json(const Json& json) {
  if (!json.is_object())
    throw Error(std::string("a sample must be a JSON object, found ") + json.type_name());
  Sample s;
  for (const auto& [key, v] : json.as_object()) {
    auto opt_int = [&]() -> std::optional<int64_t> {
      return v.is_null() ? std::nullopt : std::optional(v.as_int());
    };
    auto str = [&]() { return v.is_null() ? std::string() : v.as_string(); };
    if (key == "group_index")
      s.group_index = opt_int();
    else if (key == "index")
      s.index = opt_int();
    else if (key == "rollout_id")
      s.rollout_id = opt_int();
    else if (key == "prompt")
      s.prompt = v;
    else if (key == "tokens")
      s.tokens = from_json_list<int32_t>(v);
    else if (key == "multimodal_inputs")
      s.multimodal_inputs = v;
    else if (key == "multimodal_train_inputs")
      s.multimodal_train_inputs = v;
    else if (key == "apply_chat_template_kwargs")
      s.apply_chat_template_kwargs = v.is_null() ? Json::object() : v;
    else if (key == "response")
      s.response = str();
    else if (key == "response_length")
      s.response_length = v.as_int();
    else if (key == "label")
      s.label = v;
    else if (key == "reward")
      s.reward = v;
    else if (key == "loss_mask") {
      if (!v.is_null()) s.loss_mask = from_json_list<int32_t>(v);
    } else if (key == "weight_versions") {
      for (const auto& e : v.is_null() ? Json::Array{} : v.as_array())
        s.weight_versions.push_back(e.is_string() ? e.as_string() : e.dump());
    } else if (key == "rollout_log_probs") {
      if (!v.is_null()) s.rollout_log_probs = from_json_list<float>(v);
    } else if (key == "rollout_top_p_token_ids")
      s.rollout_top_p_token_ids = from_json_list<int32_t>(v);
    else if (key == "rollout_top_p_offsets")
      s.rollout_top_p_offsets = from_json_list<int32_t>(v);
    else if (key == "rollout_routed_experts")
      s.rollout_routed_experts = from_json_list<int32_t>(v);
    else if (key == "remove_sample")
      s.remove_sample = v.as_bool();
    else if (key == "teacher_log_probs") {
      if (!v.is_null()) s.teacher_log_probs = from_json_list<float>(v);
    } else if (key == "status")
      s.status = sample_status_from_string(v.as_string());
    else if (key == "metadata")
      s.metadata = v.is_null() ? Json::object() : v;
    else if (key == "generate_function_path")
      s.generate_function_path = str();
    else if (key == "custom_rm_path")
      s.custom_rm_path = str();
    else if (key == "train_metadata")
      s.train_metadata = v;
    else if (key == "session_id")
      s.session_id = str();
    else if (key == "non_generation_time")
      s.non_generation_time = v.as_double();
    else if (key == "spec_info" && v.is_object()) {
      auto get = [&](const char* k) {
        const Json* e = v.find(k);
        return e ? e->as_int() : 0;
      };
      s.spec_info = {get("accept_tokens"), get("draft_tokens"), get("verify_ct"),
                     get("completion_tokens")};
    } else if (key == "prefix_cache_info" && v.is_object()) {
      auto get = [&](const char* k) {
        const Json* e = v.find(k);
        return e ? e->as_int() : 0;
      };
      s.prefix_cache_info = {get("cached_tokens"), get("total_prompt_tokens")};
    } else {
      s.extra[key] = v;
    }
  }
  return s;
}

}  // namespace vime
