// Shared by the tokenizer tests: the real tokenizers (loaded once per test run) and the goldens.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vime/json.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::test {

// "qwen3", "llama3", "gpt2", "deepseek_v3", "gemma3" or "gpt4o" from VIME_ASSET_DIR
// (scripts/fetch_assets.sh).
const tokenizer::HfTokenizer& real_tokenizer(const std::string& name);
std::string asset_dir(const std::string& name);
// tests/data/tokenizer/variants/<name>.json: a real tokenizer.json with components replaced, or a
// synthetic one (scripts/goldens/make_tokenizer_goldens.js).
std::unique_ptr<tokenizer::HfTokenizer> variant_tokenizer(const std::string& name);
// tests/data/tokenizer/<file>, one JSON object per line.
std::vector<Json> read_golden(const std::string& file);
std::string show_ids(const std::vector<int32_t>& ids);

}  // namespace vime::test
