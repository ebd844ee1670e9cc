#include "vime/multi_turn.hpp"

#include <utility>

#include "vime/args.hpp"
#include "vime/tokenizer.hpp"

namespace vime {

void start_response(Sample& sample, std::vector<int32_t> prompt_ids) {
  sample.tokens = std::move(prompt_ids);
  sample.response.clear();
  sample.response_length = 0;
  sample.loss_mask = std::vector<int32_t>{};
  sample.rollout_log_probs = std::vector<float>{};
  sample.rollout_top_p_token_ids.clear();
  sample.rollout_top_p_offsets.clear();
  sample.rollout_routed_experts.clear();
  sample.status = SampleStatus::kPending;
}

TurnOutput generate_turn(GenerateContext& ctx, Sample& sample, GenerateRequest& request) {
  request.input_ids = sample.tokens;
  request.return_routed_experts =
      ctx.args.has("use_rollout_routing_replay") && ctx.args.get_bool("use_rollout_routing_replay");
  GenerateResponse out = ctx.engine.generate(request);
  if (out.finish_reason == "abort") {
    sample.status = SampleStatus::kAborted;
    return {"", out.finish_reason};
  }
  std::string text =
      ctx.tokenizer.decode(out.output_ids, request.sampling_params.skip_special_tokens);
  sample.append_response_tokens(out.output_ids, out.output_log_probs, /*trainable=*/true, text);
  // The engine routed the whole sequence so far (earlier turns are in its prompt).
  if (request.return_routed_experts) sample.rollout_routed_experts = std::move(out.routed_experts);
  if (!out.weight_version.empty()) sample.weight_versions.push_back(out.weight_version);
  return {std::move(text), std::move(out.finish_reason)};
}

}  // namespace vime
