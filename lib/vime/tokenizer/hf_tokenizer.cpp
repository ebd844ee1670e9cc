#include "vime/tokenizer/hf_tokenizer.hpp"

#include "vime/error.hpp"
#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer {
namespace {

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}

}  // namespace

std::string clean_up_tokenization(std::string text) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(text, from, to);
  return text;
}

HfTokenizer::HfTokenizer(TokenizerParts parts) : parts_(std::move(parts)) {
  if (!parts_.model) throw Error("tokenizer: no model");
  assign_added_token_ids();
  chat_template_ = new_chat_template_slot();
  std::vector<std::string> raw_patterns, normalized_patterns;
  std::vector<size_t> raw_index, normalized_index;
  // HF's trie takes special tokens first, then the others.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < parts_.added_tokens.size(); ++i) {
      const AddedToken& token = parts_.added_tokens[i];
      if (token.special != (pass == 0)) continue;
      if (token.normalized) {
        normalized_patterns.push_back(
            parts_.normalizer ? parts_.normalizer->normalize(token.content) : token.content);
        normalized_index.push_back(i);
      } else {
        raw_patterns.push_back(token.content);
        raw_index.push_back(i);
      }
    }
  }
  raw_matcher_ = AddedTokenMatcher(parts_.added_tokens, raw_patterns, raw_index);
  normalized_matcher_ =
      AddedTokenMatcher(parts_.added_tokens, normalized_patterns, normalized_index);
  for (size_t i = 0; i < parts_.added_tokens.size(); ++i)
    added_by_id_[parts_.added_tokens[i].id] = i;

  vocab_size_ = static_cast<int64_t>(parts_.model->vocab_size());
  for (const AddedToken& token : parts_.added_tokens) {
    if (!parts_.model->token_to_id(token.content)) ++vocab_size_;
  }
  const auto id_of = [this](const std::optional<std::string>& token) -> std::optional<int32_t> {
    if (!token) return std::nullopt;
    return token_to_id(*token);
  };
  bos_id_ = id_of(parts_.bos_token);
  eos_id_ = id_of(parts_.eos_token);
  pad_id_ = id_of(parts_.pad_token);
  if (parts_.add_bos_token || parts_.add_eos_token) {
    const bool add_bos = parts_.add_bos_token.value_or(true);
    const bool add_eos = parts_.add_eos_token.value_or(false);
    if ((add_bos && !bos_id_) || (add_eos && !eos_id_)) {
      throw Error(
          "tokenizer: tokenizer_config.json asks for add_bos_token/add_eos_token but has no such "
          "token");
    }
    parts_.special_prefix.clear();
    parts_.special_suffix.clear();
    if (add_bos) parts_.special_prefix.push_back(*bos_id_);
    if (add_eos) parts_.special_suffix.push_back(*eos_id_);
  }
}

// HF gives an added token the id of the same content in the model's vocabulary, else the next free
// id after the vocabulary; the file's "id" is only checked (with a warning). Well-formed files
// agree.
void HfTokenizer::assign_added_token_ids() {
  const auto model_size = static_cast<int32_t>(parts_.model->vocab_size());
  std::unordered_map<std::string, int32_t> assigned;
  std::optional<int32_t> max_assigned;
  for (AddedToken& token : parts_.added_tokens) {
    int32_t id;
    if (auto it = assigned.find(token.content); it != assigned.end()) {
      id = it->second;
    } else if (auto in_model = parts_.model->token_to_id(token.content)) {
      id = *in_model;
    } else if (!max_assigned) {
      id = model_size;
    } else {
      id = *max_assigned >= model_size ? *max_assigned + 1 : model_size;
    }
    token.id = id;
    assigned.emplace(token.content, id);
    max_assigned = std::max(max_assigned.value_or(id), id);
  }
}

HfTokenizer::~HfTokenizer() = default;

std::optional<int32_t> HfTokenizer::token_to_id(std::string_view token) const {
  for (const AddedToken& added : parts_.added_tokens) {
    if (added.content == token) return added.id;
  }
  return parts_.model->token_to_id(token);
}

std::string HfTokenizer::id_to_token(int32_t id) const {
  auto it = added_by_id_.find(id);
  if (it != added_by_id_.end()) return parts_.added_tokens[it->second].content;
  return std::string(parts_.model->id_to_token(id));
}

bool HfTokenizer::is_special(int32_t id) const {
  auto it = added_by_id_.find(id);
  return it != added_by_id_.end() && parts_.added_tokens[it->second].special;
}

std::vector<int32_t> HfTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::string repaired;
  if (!is_valid_utf8(text)) {
    repaired = utf8_lossy(text);
    text = repaired;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  if (add_special_tokens) ids = parts_.special_prefix;
  raw_matcher_.split(
      text,
      [&](std::string_view segment) {
        encode_segment(segment, segment.data() == text.data(), ids);
      },
      [&](int32_t id) { ids.push_back(id); });
  if (add_special_tokens)
    ids.insert(ids.end(), parts_.special_suffix.begin(), parts_.special_suffix.end());
  return ids;
}

void HfTokenizer::encode_segment(std::string_view segment, bool first,
                                 std::vector<int32_t>& out) const {
  std::string normalized;
  if (parts_.normalizer) {
    normalized = parts_.normalizer->normalize(segment);
    segment = normalized;
  }
  if (normalized_matcher_.empty()) {
    encode_piece(segment, first, out);
    return;
  }
  normalized_matcher_.split(
      segment,
      [&](std::string_view piece) {
        encode_piece(piece, first && piece.data() == segment.data(), out);
      },
      [&](int32_t id) { out.push_back(id); });
}

void HfTokenizer::encode_piece(std::string_view piece, bool first,
                               std::vector<int32_t>& out) const {
  if (!parts_.pre_tokenizer) {
    parts_.model->encode_word(piece, out);
    return;
  }
  parts_.pre_tokenizer->split(
      piece, first, [&](std::string_view word, bool) { parts_.model->encode_word(word, out); });
}

std::string HfTokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  return decode_text(ids, skip_special_tokens, parts_.clean_up_tokenization_spaces);
}

std::string HfTokenizer::decode_text(std::span<const int32_t> ids, bool skip_special_tokens,
                                     bool clean_up) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    auto added = added_by_id_.find(id);
    if (added != added_by_id_.end()) {
      const AddedToken& token = parts_.added_tokens[added->second];
      if (!(skip_special_tokens && token.special)) tokens.push_back(token.content);
      continue;
    }
    std::string_view token = parts_.model->id_to_token(id);
    if (!token.empty()) tokens.emplace_back(token);
  }
  std::string text;
  if (parts_.decoder) {
    parts_.decoder->decode_chain(tokens);
    for (const std::string& piece : tokens) text += piece;
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) text += ' ';
      text += tokens[i];
    }
  }
  if (clean_up) text = clean_up_tokenization(std::move(text));
  return text;
}

}  // namespace vime::tokenizer
