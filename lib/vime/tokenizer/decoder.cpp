#include "vime/tokenizer/decoder.hpp"

#include <optional>

#include "vime/tokenizer/byte_level.hpp"
#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer {
namespace {

std::optional<unsigned char> parse_byte_token(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return std::nullopt;
  unsigned value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = token[i];
    value <<= 4;
    if (c >= '0' && c <= '9') {
      value |= static_cast<unsigned>(c - '0');
    } else if (c >= 'A' && c <= 'F') {
      value |= static_cast<unsigned>(c - 'A' + 10);
    } else if (c >= 'a' && c <= 'f') {
      value |= static_cast<unsigned>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
  }
  return static_cast<unsigned char>(value);
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}

}  // namespace

void ByteLevelDecoder::decode_chain(std::vector<std::string>& tokens) const {
  std::string bytes;
  for (const std::string& token : tokens) {
    // A token with a character outside the byte map (an added token) stands for its own UTF-8.
    if (auto mapped = chars_to_bytes(token)) {
      bytes += *mapped;
    } else {
      bytes += token;
    }
  }
  tokens.assign(1, utf8_lossy(bytes));
}

void ByteFallbackDecoder::decode_chain(std::vector<std::string>& tokens) const {
  std::vector<std::string> out;
  std::string pending;
  size_t pending_count = 0;
  const auto flush = [&] {
    if (pending_count == 0) return;
    if (is_valid_utf8(pending)) {
      out.push_back(pending);
    } else {
      std::string replacement;
      for (size_t i = 0; i < pending_count; ++i) replacement += "\xEF\xBF\xBD";
      out.push_back(replacement);
    }
    pending.clear();
    pending_count = 0;
  };
  for (std::string& token : tokens) {
    if (auto byte = parse_byte_token(token)) {
      pending.push_back(static_cast<char>(*byte));
      ++pending_count;
    } else {
      flush();
      out.push_back(std::move(token));
    }
  }
  flush();
  tokens = std::move(out);
}

void FuseDecoder::decode_chain(std::vector<std::string>& tokens) const {
  std::string joined;
  for (const std::string& token : tokens) joined += token;
  tokens.assign(1, joined);
}

void StripDecoder::decode_chain(std::vector<std::string>& tokens) const {
  for (std::string& token : tokens) {
    size_t begin = 0;
    for (size_t i = 0; i < start_ && token.compare(begin, content_.size(), content_) == 0; ++i) {
      begin += content_.size();
    }
    size_t end = token.size();
    for (size_t i = 0; i < stop_ && end >= begin + content_.size() &&
                       token.compare(end - content_.size(), content_.size(), content_) == 0;
         ++i) {
      end -= content_.size();
    }
    token = token.substr(begin, end - begin);
  }
}

void ReplaceDecoder::decode_chain(std::vector<std::string>& tokens) const {
  for (std::string& token : tokens) {
    std::string out;
    size_t last = 0;
    regex_.for_each_match(token, [&](size_t start, size_t end) {
      out.append(token, last, start - last);
      out += content_;
      last = end;
    });
    out.append(token, last, std::string::npos);
    token = std::move(out);
  }
}

void MetaspaceDecoder::decode_chain(std::vector<std::string>& tokens) const {
  // As HF: in the first token every replacement character goes (unless the scheme is "never"); in
  // the others each becomes a space.
  for (size_t i = 0; i < tokens.size(); ++i) {
    replace_all(tokens[i], replacement_, i == 0 && scheme_ != PrependScheme::kNever ? "" : " ");
  }
}

void SequenceDecoder::decode_chain(std::vector<std::string>& tokens) const {
  for (const auto& step : steps_) step->decode_chain(tokens);
}

}  // namespace vime::tokenizer
