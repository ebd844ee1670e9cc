#include "vime/rollout/default_generate.hpp"

#include <cstdio>
#include <random>

#include "vime/engine_client.hpp"
#include "vime/error.hpp"

namespace vime::rollout {
namespace {

std::vector<int32_t> to_int32(const std::vector<int64_t>& values) {
  return std::vector<int32_t>(values.begin(), values.end());
}

bool optional_bool(const Json& fields, std::string_view key, bool fallback) {
  const Json* value = fields.find(key);
  return value && value->is_bool() ? value->as_bool() : fallback;
}

}  // namespace

SamplingParams rollout_sampling_params(const RolloutOptions& options) {
  SamplingParams p;
  p.temperature = options.temperature;
  p.top_p = options.top_p;
  p.top_k = options.top_k;
  if (!options.max_response_len)
    throw UsageError("--rollout-max-response-len is required to generate rollouts");
  p.max_new_tokens = *options.max_response_len;
  p.stop = options.stop;
  p.stop_token_ids = to_int32(options.stop_token_ids);
  p.skip_special_tokens = options.skip_special_tokens;
  p.no_stop_trim = true;
  p.spaces_between_special_tokens = false;
  return p;
}

SamplingParams eval_sampling_params(const RolloutOptions& options,
                                    const eval::EvalDatasetConfig& config) {
  SamplingParams p;
  p.temperature = config.temperature.value_or(options.temperature);
  p.top_p = config.top_p.value_or(options.top_p);
  p.top_k = config.top_k.value_or(options.top_k);
  auto max_len = config.max_response_len ? config.max_response_len : options.max_response_len;
  if (!max_len)
    throw UsageError("eval dataset " + config.name +
                     ": no max_response_len (set --eval-max-response-len or "
                     "--rollout-max-response-len)");
  p.max_new_tokens = *max_len;
  p.min_new_tokens = config.min_new_tokens.value_or(0);
  p.stop = config.stop;
  p.stop_token_ids = to_int32(config.stop_token_ids);
  p.skip_special_tokens =
      optional_bool(config.fields, "skip_special_tokens", options.skip_special_tokens);
  p.no_stop_trim = optional_bool(config.fields, "no_stop_trim", true);
  if (const Json* penalty = config.fields.find("repetition_penalty");
      penalty && penalty->is_number())
    p.repetition_penalty = penalty->as_double();
  return p;
}

std::vector<int32_t> prompt_input_ids(const Tokenizer& tokenizer, const Sample& sample) {
  if (!sample.tokens.empty()) return sample.tokens;
  if (sample.prompt.is_string()) return tokenizer.encode(sample.prompt.as_string(), false);
  if (sample.prompt.is_array()) {
    const Json* tools = sample.metadata.find("tools");
    const std::string text = tokenizer.apply_chat_template(sample.prompt, tools ? *tools : Json(),
                                                           true, sample.apply_chat_template_kwargs);
    return tokenizer.encode(text, false);
  }
  throw Error(std::string("sample prompt must be a string or a list of chat messages, got ") +
              sample.prompt.type_name());
}

std::string new_session_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const uint64_t hi = (rng() & 0xFFFFFFFFFFFF0FFFull) | 0x4000ull;
  const uint64_t lo = (rng() & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  char text[37];
  std::snprintf(text, sizeof text, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFull));
  return text;
}

Sample default_generate(GenerateContext& ctx, Sample sample, const SamplingParams& params,
                        bool mask_earlier_tokens) {
  GenerateRequest request;
  request.input_ids = prompt_input_ids(ctx.tokenizer, sample);
  request.sampling_params = params;
  request.sampling_params.max_new_tokens -= sample.response_length;
  if (request.sampling_params.max_new_tokens < 0)
    throw Error("sample " + std::to_string(sample.index.value_or(-1)) + " already has " +
                std::to_string(sample.response_length) + " response tokens, more than the " +
                std::to_string(params.max_new_tokens) + " allowed");
  if (sample.tokens.empty()) sample.tokens = request.input_ids;
  if (request.sampling_params.max_new_tokens == 0) {
    sample.status = SampleStatus::kTruncated;
    return sample;
  }
  if (sample.session_id.empty()) sample.session_id = new_session_id();
  request.session_id = sample.session_id;
  if (sample.group_index) request.group_id = std::to_string(*sample.group_index);
  request.return_routed_experts =
      ctx.args.has("use_rollout_routing_replay") && ctx.args.get_bool("use_rollout_routing_replay");

  GenerateResponse response = ctx.engine.generate(request);

  if (mask_earlier_tokens && sample.response_length > 0)
    sample.loss_mask = std::vector<int32_t>(static_cast<size_t>(sample.response_length), 0);
  std::vector<float> log_probs = response.output_log_probs;
  if (log_probs.size() != response.output_ids.size())
    throw Error("engine returned " + std::to_string(response.output_ids.size()) + " tokens but " +
                std::to_string(log_probs.size()) + " log-probs");
  const std::string text =
      ctx.tokenizer.decode(response.output_ids, request.sampling_params.skip_special_tokens);
  sample.append_response_tokens(response.output_ids, log_probs, true, text);
  sample.set_status_from_finish_reason(response.finish_reason);
  if (!response.weight_version.empty()) sample.weight_versions.push_back(response.weight_version);
  // The engine routed the whole sequence (a resumed sample's earlier output is in its prompt).
  if (request.return_routed_experts) sample.rollout_routed_experts = response.routed_experts;
  sample.prefix_cache_info.cached_tokens += response.cached_tokens;
  sample.prefix_cache_info.total_prompt_tokens += response.prompt_tokens;
  return sample;
}

}  // namespace vime::rollout
