// Shared by the [rollout_manager] and [sft_rollout] tests: args from flags, a prompt file, the real
// Qwen3 tokenizer, test plugin paths.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rollout/scripted_engine.hpp"
#include "support/test_support.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/args.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/data/rollout_data_source.hpp"
#include "vime/json.hpp"

namespace vime::test {

inline Args rollout_args(std::vector<std::string> flags) {
  std::vector<std::string> base{
      "--rollout-max-response-len", "64", "--vllm-server-concurrency", "8", "--label-key", "label"};
  base.insert(base.end(), flags.begin(), flags.end());
  return core::parse_args(base);
}

// One JSONL row per prompt: {"input": "Q<i>: What is <i>+<i+1>? [<marker>]", "label": "<2i+1>"}.
inline std::string math_prompts(const TempDir& dir, const std::vector<std::string>& markers,
                                const std::string& name = "prompts.jsonl") {
  std::string text;
  for (size_t i = 0; i < markers.size(); ++i) {
    Json row = Json::object();
    row["input"] = "Q" + std::to_string(i) + ": What is " + std::to_string(i) + "+" +
                   std::to_string(i + 1) + "? [" + markers[i] + "]";
    row["label"] = std::to_string(2 * i + 1);
    text += row.dump() + "\n";
  }
  return dir.write(name, text).string();
}

inline std::string manager_plugin(const std::string& symbol) {
  return plugin_path("rollout_manager_plugins") + ":" + symbol;
}

}  // namespace vime::test
