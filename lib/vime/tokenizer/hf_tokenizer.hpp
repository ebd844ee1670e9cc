// vime::Tokenizer for Hugging Face tokenizer files: tokenizer.json (+ tokenizer_config.json and the
// chat template beside it), or GPT-2's encoder.json + vocab.bpe. Encode and decode match HF's Rust
// tokenizers (and transformers' decode cleanup) id for id. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vime/tokenizer.hpp"
#include "vime/tokenizer/added_vocabulary.hpp"
#include "vime/tokenizer/bpe_model.hpp"
#include "vime/tokenizer/decoder.hpp"
#include "vime/tokenizer/normalizer.hpp"
#include "vime/tokenizer/pre_tokenizer.hpp"

namespace vime::tokenizer {

class ChatTemplate;

// Everything a tokenizer is made of; tokenizer_json.cpp and gpt2_files.cpp build it from files.
struct TokenizerParts {
  std::unique_ptr<Normalizer> normalizer;       // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // may be null
  std::unique_ptr<BpeModel> model;
  std::vector<AddedToken> added_tokens;
  std::vector<int32_t> special_prefix;  // post-processor ids around the text (add_special_tokens)
  std::vector<int32_t> special_suffix;
  std::unique_ptr<Decoder> decoder;  // may be null: tokens joined by spaces
  // From tokenizer_config.json.
  std::optional<std::string> bos_token, eos_token, pad_token;
  bool clean_up_tokenization_spaces = false;
  // transformers' Llama/Gemma fast tokenizers rebuild the post-processor from add_bos_token /
  // add_eos_token (update_post_processor); set when tokenizer_class is one of them.
  std::optional<bool> add_bos_token, add_eos_token;
  std::filesystem::path directory;  // where the chat template is looked for; empty: none
};

class HfTokenizer : public vime::Tokenizer {
 public:
  explicit HfTokenizer(TokenizerParts parts);
  ~HfTokenizer() override;

  // An HF tokenizer directory (tokenizer.json), or one with GPT-2's encoder.json + vocab.bpe.
  // Throws vime::Error naming the file when it is missing, not JSON, or uses a component vime
  // lacks.
  static std::unique_ptr<HfTokenizer> from_directory(const std::filesystem::path& dir);
  // tokenizer.json (and tokenizer_config.json) contents given as text.
  static std::unique_ptr<HfTokenizer> from_json(std::string_view tokenizer_json,
                                                std::string_view config_json = {},
                                                std::string_view where = "tokenizer.json");
  static std::unique_ptr<HfTokenizer> from_gpt2_files(const std::filesystem::path& encoder_json,
                                                      const std::filesystem::path& vocab_bpe);

  // Invalid UTF-8 in `text` is read as U+FFFD (as Python would after decoding with
  // errors="replace").
  std::vector<int32_t> encode(std::string_view text,
                              bool add_special_tokens = false) const override;
  // Ids outside the vocabulary are skipped, as HF does. Broken UTF-8 (ids cut inside a character)
  // becomes U+FFFD.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const override;
  // decode() with transformers' clean_up_tokenization_spaces chosen by the caller rather than the
  // config (DecodeStream decodes without it, as HF's Rust decoder does).
  std::string decode_text(std::span<const int32_t> ids, bool skip_special_tokens,
                          bool clean_up) const;
  std::string apply_chat_template(const Json& messages, const Json& tools,
                                  bool add_generation_prompt, const Json& kwargs) const override;
  // The same with messages, tools and kwargs as JSON text, keeping their key order (as transformers
  // sees data after json.loads); prefer it for data read from files.
  std::string apply_chat_template_json(std::string_view messages_json, std::string_view tools_json,
                                       bool add_generation_prompt,
                                       std::string_view kwargs_json) const;
  std::optional<int32_t> eos_token_id() const override { return eos_id_; }
  std::optional<int32_t> pad_token_id() const override { return pad_id_; }
  std::optional<int32_t> bos_token_id() const { return bos_id_; }
  int64_t vocab_size() const override { return vocab_size_; }  // len(tokenizer): with added tokens

  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::string id_to_token(int32_t id) const;  // empty when unknown
  bool is_special(int32_t id) const;

 private:
  static std::unique_ptr<HfTokenizer> build(std::string_view tokenizer_json,
                                            std::string_view config_json, const std::string& where);
  void assign_added_token_ids();
  void encode_segment(std::string_view segment, bool first, std::vector<int32_t>& out) const;
  void encode_piece(std::string_view piece, bool first, std::vector<int32_t>& out) const;
  const ChatTemplate& chat_template() const;

  TokenizerParts parts_;
  AddedTokenMatcher raw_matcher_;         // added tokens matched in the text as given
  AddedTokenMatcher normalized_matcher_;  // `normalized` ones, matched after normalization
  std::unordered_map<int32_t, size_t> added_by_id_;
  std::optional<int32_t> bos_id_, eos_id_, pad_id_;
  int64_t vocab_size_ = 0;
  struct ChatTemplateSlot;
  // Loaded on first use; shared_ptr because the type is complete only in hf_tokenizer_chat.cpp.
  std::shared_ptr<ChatTemplateSlot> chat_template_;
  static std::shared_ptr<ChatTemplateSlot> new_chat_template_slot();
};

// transformers' clean_up_tokenization: " ." -> ".", " n't" -> "n't", ...
std::string clean_up_tokenization(std::string text);

}  // namespace vime::tokenizer
