// GPT-2's original files (OpenAI's encoder.json + vocab.bpe, or HF's vocab.json + merges.txt) as
// the tokenizer HF builds from them: byte-level BPE with the GPT-2 regex and <|endoftext|>.
#include <rapidjson/document.h>

#include <sstream>

#include "vime/error.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"
#include "vime/tokenizer/read_file.hpp"

namespace vime::tokenizer {

std::unique_ptr<HfTokenizer> HfTokenizer::from_gpt2_files(const std::filesystem::path& encoder_json,
                                                          const std::filesystem::path& vocab_bpe) {
  const std::string vocab_text = read_file(encoder_json);
  rapidjson::Document doc;
  doc.Parse(vocab_text.data(), vocab_text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    throw Error("tokenizer: " + encoder_json.string() + " is not a JSON object of token -> id");
  }
  TokenIdMap vocab;
  vocab.reserve(doc.MemberCount());
  for (const auto& entry : doc.GetObject()) {
    if (!entry.value.IsInt()) {
      throw Error("tokenizer: " + encoder_json.string() + ": the id of '" + entry.name.GetString() +
                  "' is not an integer");
    }
    vocab.emplace(std::string(entry.name.GetString(), entry.name.GetStringLength()),
                  entry.value.GetInt());
  }

  std::vector<std::pair<std::string, std::string>> merges;
  std::istringstream lines(read_file(vocab_bpe));
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.starts_with("#version"))) continue;
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      throw Error("tokenizer: " + vocab_bpe.string() + ":" + std::to_string(number) +
                  ": expected a merge \"left right\"");
    }
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }

  TokenizerParts parts;
  parts.pre_tokenizer = std::make_unique<ByteLevelPreTokenizer>(false, true);
  parts.decoder = std::make_unique<ByteLevelDecoder>();
  const std::string eos = "<|endoftext|>";
  if (auto it = vocab.find(eos); it != vocab.end()) {
    parts.added_tokens.push_back(AddedToken{eos, it->second, true, false, false, false, true});
    parts.bos_token = parts.eos_token = eos;
  }
  BpeOptions options;
  options.byte_level = true;
  parts.model = std::make_unique<BpeModel>(std::move(vocab), merges, options);
  parts.directory = encoder_json.parent_path();
  return std::make_unique<HfTokenizer>(std::move(parts));
}

}  // namespace vime::tokenizer
