#include "vime/rollout/sft_rollout.hpp"

#include <algorithm>

#include "vime/error.hpp"

namespace vime::rollout {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void append(SftTokens& out, const std::vector<int32_t>& ids, int32_t mask) {
  out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
  out.loss_mask.insert(out.loss_mask.end(), ids.size(), mask);
}

}  // namespace

bool is_sft_rollout_name(std::string_view name) {
  return name == "sft" || name == "slime.rollout.sft_rollout.generate_rollout";
}

SftTokens sft_chat_tokens(const Tokenizer& tokenizer, const Json& messages, const Json& tools) {
  if (!messages.is_array() || messages.size() == 0)
    throw Error("SFT rollout: a chat prompt must be a non-empty list of messages");
  const Json dummy(
      Json::Object{{"role", Json("user")}, {"content", Json("FOR CALCULATING LOSS MASK ONLY")}});
  const Json none = Json::object();
  const std::string dummy_text =
      tokenizer.apply_chat_template(Json(Json::Array{dummy}), Json(), false, none);
  const std::string header =
      tokenizer.apply_chat_template(Json(Json::Array{dummy}), Json(), true, none)
          .substr(dummy_text.size());
  SftTokens out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& message = messages.at(i);
    std::string text;
    if (i == 0) {
      text = tokenizer.apply_chat_template(Json(Json::Array{message, dummy}), tools, false, none);
      if (!ends_with(text, dummy_text))
        throw Error("SFT rollout: the chat template does not end with the dummy turn");
      text.resize(text.size() - dummy_text.size());
    } else {
      text = tokenizer.apply_chat_template(Json(Json::Array{dummy, message}), Json(), false, none);
      if (!starts_with(text, dummy_text))
        throw Error("SFT rollout: the chat template does not start with the dummy turn");
      text = text.substr(dummy_text.size());
    }
    const Json* role = message.find("role");
    if (role && role->is_string() && role->as_string() == "assistant" &&
        starts_with(text, header)) {
      append(out, tokenizer.encode(header, false), 0);
      append(out, tokenizer.encode(text.substr(header.size()), false), 1);
    } else {
      append(out, tokenizer.encode(text, false), 0);
    }
  }
  return out;
}

void make_sft_sample(const Tokenizer& tokenizer, Sample& sample) {
  SftTokens t;
  if (sample.prompt.is_array()) {
    const Json* tools = sample.metadata.find("tools");
    t = sft_chat_tokens(tokenizer, sample.prompt, tools ? *tools : Json());
  } else if (sample.prompt.is_string() && sample.label.is_string()) {
    append(t, tokenizer.encode(sample.prompt.as_string(), false), 0);
    std::vector<int32_t> label = tokenizer.encode(sample.label.as_string(), false);
    if (auto eos = tokenizer.eos_token_id()) label.push_back(*eos);
    append(t, label, 1);
  } else {
    throw Error("SFT rollout: sample " + std::to_string(sample.index.value_or(-1)) +
                " needs a list of chat messages, or a string prompt with a string label");
  }
  auto first = std::find(t.loss_mask.begin(), t.loss_mask.end(), 1);
  const auto response_length = static_cast<int64_t>(t.loss_mask.end() - first);
  sample.tokens = std::move(t.tokens);
  sample.response_length = response_length;
  sample.loss_mask = std::vector<int32_t>(first, t.loss_mask.end());
  sample.reward = 0.0;
  sample.status = SampleStatus::kCompleted;
}

RolloutFnTrainOutput sft_rollout(const Tokenizer& tokenizer, DataSource& data_source,
                                 int64_t num_groups) {
  RolloutFnTrainOutput out;
  out.samples = data_source.get_samples(num_groups);
  for (SampleGroup& group : out.samples)
    for (Sample& sample : group) make_sft_sample(tokenizer, sample);
  return out;
}

}  // namespace vime::rollout
