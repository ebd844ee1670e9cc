#include "arith_tokenizer.hpp"

#include <string_view>
#include <vector>

#include "vime/json.hpp"
#include "vime/tokenizer/byte_level.hpp"

namespace vime::quickstart {
namespace {

// Words that become one token each, through a left-to-right chain of merges.
constexpr std::string_view kWords[] = {"\\boxed{", "<calc>", "</calc>", "<result>", "</result>"};
constexpr std::string_view kSpecials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};

// A tiny ChatML template, so --apply-chat-template also works with this tokenizer.
constexpr const char* kChatTemplate =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

Json type_object(const char* type) {
  Json j = Json::object();
  j["type"] = type;
  return j;
}

}  // namespace

ArithTokenizerFiles make_arith_tokenizer(std::span<const std::string_view> extra_words) {
  std::vector<std::string_view> words(std::begin(kWords), std::end(kWords));
  words.insert(words.end(), extra_words.begin(), extra_words.end());
  Json vocab = Json::object();
  int64_t next_id = 0;
  for (int byte = 0; byte < 256; ++byte) {
    vocab[tokenizer::byte_to_chars(static_cast<unsigned char>(byte))] = next_id++;
  }
  Json merges = Json::array();
  for (std::string_view word : words) {
    std::string left = tokenizer::bytes_to_chars(word.substr(0, 1));
    for (size_t i = 1; i < word.size(); ++i) {
      std::string right = tokenizer::bytes_to_chars(word.substr(i, 1));
      std::string merged = left + right;
      if (vocab.find(merged) == nullptr) {
        merges.push_back(Json(left + " " + right));
        vocab[merged] = next_id++;
      }
      left = merged;
    }
  }
  Json added = Json::array();
  const int64_t eos_id = next_id;  // <|endoftext|>, the first special token
  for (std::string_view special : kSpecials) {
    Json t = Json::object();
    t["id"] = next_id++;
    t["content"] = special;
    t["single_word"] = false;
    t["lstrip"] = false;
    t["rstrip"] = false;
    t["normalized"] = false;
    t["special"] = true;
    added.push_back(t);
  }

  Json model = type_object("BPE");
  model["dropout"] = nullptr;
  model["unk_token"] = nullptr;
  model["continuing_subword_prefix"] = nullptr;
  model["end_of_word_suffix"] = nullptr;
  model["fuse_unk"] = false;
  model["byte_fallback"] = false;
  model["ignore_merges"] = false;
  model["vocab"] = vocab;
  model["merges"] = merges;
  // No regex split: "\boxed{" must stay one piece for its merges to apply.
  Json pre = type_object("ByteLevel");
  pre["add_prefix_space"] = false;
  pre["trim_offsets"] = false;
  pre["use_regex"] = false;
  Json decoder = type_object("ByteLevel");
  decoder["add_prefix_space"] = false;
  decoder["trim_offsets"] = false;
  decoder["use_regex"] = false;

  Json tj = Json::object();
  tj["version"] = "1.0";
  tj["truncation"] = nullptr;
  tj["padding"] = nullptr;
  tj["added_tokens"] = added;
  tj["normalizer"] = nullptr;
  tj["pre_tokenizer"] = pre;
  tj["post_processor"] = nullptr;
  tj["decoder"] = decoder;
  tj["model"] = model;

  Json cfg = Json::object();
  cfg["tokenizer_class"] = "PreTrainedTokenizerFast";
  cfg["bos_token"] = nullptr;
  cfg["eos_token"] = "<|endoftext|>";
  cfg["pad_token"] = "<|endoftext|>";
  cfg["unk_token"] = nullptr;
  cfg["clean_up_tokenization_spaces"] = false;
  cfg["model_max_length"] = 512;
  cfg["chat_template"] = kChatTemplate;

  ArithTokenizerFiles files;
  files.tokenizer_json = tj.dump(2) + "\n";
  files.tokenizer_config_json = cfg.dump(2) + "\n";
  files.vocab_size = next_id;
  files.eos_token_id = eos_id;
  return files;
}

}  // namespace vime::quickstart
