#include "vime/data/prompt_dataset.hpp"

#include <algorithm>
#include <iostream>
#include <numeric>

#include "vime/data/python_random.hpp"
#include "vime/error.hpp"

namespace vime::data {
namespace {

// A row that is valid JSON but cannot become a sample; reported like a malformed line.
struct RowProblem {
  std::string reason;
};

// "an integer", "a string": Json::type_name() with its article, for messages.
std::string described_type(const Json& value) {
  std::string name = value.type_name();
  const bool vowel =
      !name.empty() && std::string_view("aeiou").find(name[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + name;
}

Json parse_if_string(const Json& value, std::string_view what) {
  if (!value.is_string()) return value;
  try {
    return Json::parse(value.as_string(), what);
  } catch (const Error&) {
    throw RowProblem{std::string(what) + " is a string that is not valid JSON"};
  }
}

Json read_metadata(const Json& row, const DatasetOptions& options) {
  const Json* found = row.find(options.metadata_key);
  if (found == nullptr || found->is_null()) return Json::object();
  Json metadata = parse_if_string(*found, "'" + options.metadata_key + "'");
  if (!metadata.is_object())
    throw RowProblem{"'" + options.metadata_key + "' is " + described_type(metadata) +
                     ", not an object"};
  return metadata;
}

Json read_tools(const Json& row, const DatasetOptions& options) {
  if (!options.tool_key) return nullptr;
  const Json* found = row.find(*options.tool_key);
  if (found == nullptr || found->is_null()) return nullptr;
  Json tools = parse_if_string(*found, "'" + *options.tool_key + "'");
  if (!tools.is_array())
    throw RowProblem{"'" + *options.tool_key + "' is " + described_type(tools) + ", not a list"};
  return tools;
}

}  // namespace

PromptDataset::PromptDataset(std::string_view spec, DatasetOptions options, PromptRenderer renderer,
                             TokenCounter count_tokens)
    : options_(std::move(options)) {
  if (options_.apply_chat_template && !renderer)
    throw Error("--apply-chat-template is set but no chat-template renderer was given");
  if (options_.max_prompt_tokens && !count_tokens)
    throw Error("--rollout-max-prompt-len is set but no tokenizer was given to count tokens");

  PromptFile file = read_prompt_file(spec, options_.flag);
  report_.path = file.path;
  report_.bad_lines = std::move(file.bad_lines);
  report_.num_rows = static_cast<int64_t>(file.rows.size());

  for (PromptRow& row : file.rows) {
    try {
      const Json* input = row.value.find(options_.input_key);
      if (input == nullptr) throw RowProblem{"no key '" + options_.input_key + "'"};
      if (!input->is_string() && !input->is_array())
        throw RowProblem{"'" + options_.input_key + "' is " + described_type(*input) +
                         ", not a string or a list of messages"};
      Sample sample;
      sample.metadata = read_metadata(row.value, options_);
      if (options_.label_key) {
        const Json* label = row.value.find(*options_.label_key);
        if (label == nullptr) throw RowProblem{"no key '" + *options_.label_key + "'"};
        sample.label = *label;
      }
      Json tools = read_tools(row.value, options_);
      if (!tools.is_null()) sample.metadata["tools"] = tools;

      Json prompt = *input;
      if (!options_.prompt_template.empty() && prompt.is_string()) {
        std::string text = options_.prompt_template;
        const size_t at = text.find("{input}");
        if (at != std::string::npos) text.replace(at, 7, prompt.as_string());
        prompt = text;
      }
      if (options_.apply_chat_template) {
        Json messages = prompt;
        if (messages.is_string())
          messages =
              Json(Json::Array{Json(Json::Object{{"role", Json("user")}, {"content", prompt}})});
        sample.prompt = renderer(messages, tools, options_.apply_chat_template_kwargs);
      } else {
        sample.prompt = prompt;
      }
      if (options_.max_prompt_tokens && sample.prompt.is_string() &&
          static_cast<int64_t>(count_tokens(sample.prompt.as_string())) >
              *options_.max_prompt_tokens) {
        ++report_.num_too_long;
        continue;
      }
      samples_.push_back(std::move(sample));
    } catch (const RowProblem& p) {
      report_.bad_lines.push_back({row.line_number, p.reason});
    }
  }
  std::sort(report_.bad_lines.begin(), report_.bad_lines.end(),
            [](const BadLine& a, const BadLine& b) { return a.line_number < b.line_number; });

  if (samples_.empty() && (report_.num_rows > 0 || !report_.bad_lines.empty())) {
    std::string why;
    if (!report_.bad_lines.empty()) {
      PromptFile described{report_.path, {}, report_.bad_lines};
      why = describe_bad_lines(described);
    }
    if (report_.num_too_long > 0)
      why += (why.empty() ? "" : "; ") + std::to_string(report_.num_too_long) +
             " prompt(s) longer than --rollout-max-prompt-len " +
             std::to_string(*options_.max_prompt_tokens) + " tokens";
    throw UsageError(options_.flag + " " + report_.path + ": no usable prompt left: " + why);
  }
  if (!report_.bad_lines.empty()) {
    PromptFile described{report_.path, {}, report_.bad_lines};
    std::cerr << "vime: warning: " << options_.flag << " " << describe_bad_lines(described) << "\n";
  }
  if (report_.num_too_long > 0)
    std::cerr << "vime: warning: " << options_.flag << " " << report_.path << ": dropped "
              << report_.num_too_long << " prompt(s) longer than " << *options_.max_prompt_tokens
              << " tokens (--rollout-max-prompt-len)\n";

  order_.resize(samples_.size());
  std::iota(order_.begin(), order_.end(), size_t{0});
}

void PromptDataset::shuffle(int64_t epoch) {
  if (shuffled_epoch_ == epoch) return;
  order_ = python_shuffled_permutation(samples_.size(), options_.seed + epoch);
  shuffled_epoch_ = epoch;
}

}  // namespace vime::data
