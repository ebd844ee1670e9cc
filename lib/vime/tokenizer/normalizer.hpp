// HF normalizers: text transformations applied before pre-tokenization (to the text between added
// tokens, and to `normalized` added tokens' content).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vime/tokenizer/onig_compat.hpp"
#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual std::string normalize(std::string_view text) const = 0;
};

class UnicodeNormalizer : public Normalizer {  // NFC, NFD, NFKC, NFKD
 public:
  explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
  std::string normalize(std::string_view text) const override;

 private:
  NormalForm form_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  std::string normalize(std::string_view text) const override;
};

class StripNormalizer : public Normalizer {  // strips whitespace on the left and/or right
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string normalize(std::string_view text) const override;

 private:
  bool left_, right_;
};

class StripAccentsNormalizer : public Normalizer {  // drops combining marks (after an NFD)
 public:
  std::string normalize(std::string_view text) const override;
};

class ReplaceNormalizer : public Normalizer {  // every match of a literal or regex pattern
 public:
  ReplaceNormalizer(const std::string& regex, std::string content)
      : regex_(oniguruma_regex(regex)), content_(std::move(content)) {}
  std::string normalize(std::string_view text) const override;

 private:
  Regex regex_;
  std::string content_;
};

class PrependNormalizer : public Normalizer {  // prepends to non-empty text
 public:
  explicit PrependNormalizer(std::string prepend) : prepend_(std::move(prepend)) {}
  std::string normalize(std::string_view text) const override;

 private:
  std::string prepend_;
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}
  std::string normalize(std::string_view text) const override;

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace vime::tokenizer
