// HF decoders: turn the tokens of a decode back into text. Each step rewrites the list of token
// strings (HF's decode_chain); the result is the concatenation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vime/tokenizer/onig_compat.hpp"
#include "vime/tokenizer/pre_tokenizer.hpp"

namespace vime::tokenizer {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

class ByteLevelDecoder : public Decoder {  // GPT-2 characters back to bytes, then lossy UTF-8
 public:
  void decode_chain(std::vector<std::string>& tokens) const override;
};

class ByteFallbackDecoder : public Decoder {  // <0xXX> runs back to the bytes they stand for
 public:
  void decode_chain(std::vector<std::string>& tokens) const override;
};

class FuseDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override;
};

class StripDecoder : public Decoder {  // removes up to `start`/`stop` copies of `content` per token
 public:
  StripDecoder(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override;

 private:
  std::string content_;
  size_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(const std::string& regex, std::string content)
      : regex_(oniguruma_regex(regex)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override;

 private:
  Regex regex_;
  std::string content_;
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, PrependScheme scheme)
      : replacement_(std::move(replacement)), scheme_(scheme) {}
  void decode_chain(std::vector<std::string>& tokens) const override;

 private:
  std::string replacement_;
  PrependScheme scheme_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps)
      : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override;

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace vime::tokenizer
