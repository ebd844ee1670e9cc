// The prompt dataset of a run (slime/utils/data.py::Dataset): rows of a prompt file turned into
// Samples (prompt, label, metadata), optionally rendered through the chat template, with prompts
// over the token limit dropped, and reordered per epoch exactly as slime shuffles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vime/data/prompt_file.hpp"
#include "vime/json.hpp"
#include "vime/sample.hpp"

namespace vime {
class Args;
}

namespace vime::data {

// Renders chat messages as the model's prompt text for --apply-chat-template, as
// apply_chat_template(messages, tools, tokenize=False, add_generation_prompt=True, **kwargs) does.
// `tools` is null or a list; `template_kwargs` an object. The tokenizer area provides the real one
// (vime::tokenizer::ChatTemplate::render); tests may pass any function.
using PromptRenderer = std::function<std::string(const Json& messages, const Json& tools,
                                                 const Json& template_kwargs)>;
// Tokens in `text` encoded without special tokens; used by the long-prompt filter.
using TokenCounter = std::function<size_t(std::string_view text)>;

struct DatasetOptions {
  std::string input_key = "input";
  std::optional<std::string> label_key;  // unset: labels are null
  std::string metadata_key = "metadata";
  std::optional<std::string> tool_key;
  bool apply_chat_template = false;
  Json apply_chat_template_kwargs = Json::object();
  std::string prompt_template;  // "{input}" replaced by a string prompt before rendering (presets)
  std::optional<int64_t> max_prompt_tokens;  // --rollout-max-prompt-len; longer prompts are dropped
  int64_t seed = 42;                         // --rollout-seed; epoch e shuffles with seed + e
  std::string flag = "--prompt-data";        // named in messages

  // --input-key, --label-key, --metadata-key, --tool-key, --apply-chat-template(-kwargs),
  // --rollout-max-prompt-len, --rollout-seed.
  static DatasetOptions from(const Args& args);
};

// What loading skipped, for the one warning line and for tests.
struct DatasetReport {
  std::string path;
  std::vector<BadLine> bad_lines;  // not JSON objects, or missing/ill-typed keys
  int64_t num_too_long = 0;        // dropped by the long-prompt filter
  int64_t num_rows = 0;            // rows read (after the @[a:b] slice)
};

class PromptDataset {
 public:
  // Reads `spec` ("file.jsonl[@[a:b]]"). Throws UsageError when the file cannot be used or no row
  // is left; prints one warning line to stderr when rows were skipped. `renderer` is required with
  // apply_chat_template, `count_tokens` with max_prompt_tokens.
  PromptDataset(std::string_view spec, DatasetOptions options, PromptRenderer renderer = {},
                TokenCounter count_tokens = {});

  size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  // The i-th prompt of the current epoch's order.
  const Sample& at(size_t i) const { return samples_[order_[i]]; }
  // Reorders the rows for `epoch` (Random(seed + epoch).shuffle of the original order); a no-op
  // when already in that epoch's order, like slime.
  void shuffle(int64_t epoch);
  std::optional<int64_t> shuffled_epoch() const { return shuffled_epoch_; }
  const DatasetReport& report() const { return report_; }
  const std::string& path() const { return report_.path; }

 private:
  DatasetOptions options_;
  std::vector<Sample> samples_;  // in file order
  std::vector<size_t> order_;    // indices into samples_ for the current epoch
  std::optional<int64_t> shuffled_epoch_;
  DatasetReport report_;
};

}  // namespace vime::data
