// HF pre-tokenizers: cut normalized text into the pieces BPE sees one at a time. Each stage hands
// its pieces to the next through a callback, so no list of pieces is built. `first` is true for the
// piece that starts the whole input (Metaspace's prepend_scheme "first" needs it).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vime/tokenizer/function_ref.hpp"
#include "vime/tokenizer/onig_compat.hpp"

namespace vime::tokenizer {

using PieceSink = FunctionRef<void(std::string_view piece, bool first)>;

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void split(std::string_view text, bool first, PieceSink emit) const = 0;
};

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(const std::string& regex, SplitBehavior behavior, bool invert)
      : regex_(oniguruma_regex(regex)), behavior_(behavior), invert_(invert) {}
  void split(std::string_view text, bool first, PieceSink emit) const override;

 private:
  Regex regex_;
  SplitBehavior behavior_;
  bool invert_;
};

// Byte-level BPE's pre-tokenizer. The byte -> character mapping itself is the model's (BpeModel
// works on bytes), so this only adds the prefix space and the GPT-2 regex split.
class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
  void split(std::string_view text, bool first, PieceSink emit) const override;

 private:
  bool add_prefix_space_;
  std::unique_ptr<SplitPreTokenizer> regex_split_;
};

class DigitsPreTokenizer : public PreTokenizer {  // numbers apart, one by one or as runs
 public:
  explicit DigitsPreTokenizer(bool individual_digits) : individual_digits_(individual_digits) {}
  void split(std::string_view text, bool first, PieceSink emit) const override;

 private:
  bool individual_digits_;
};

enum class PrependScheme { kAlways, kFirst, kNever };

class MetaspacePreTokenizer
    : public PreTokenizer {  // SentencePiece: ' ' -> '▁', split before each '▁'
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void split(std::string_view text, bool first, PieceSink emit) const override;

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class WhitespaceSplitPreTokenizer : public PreTokenizer {  // split on whitespace, dropping it
 public:
  void split(std::string_view text, bool first, PieceSink emit) const override;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> stages)
      : stages_(std::move(stages)) {}
  void split(std::string_view text, bool first, PieceSink emit) const override;

 private:
  void run(size_t stage, std::string_view text, bool first, PieceSink emit) const;
  std::vector<std::unique_ptr<PreTokenizer>> stages_;
};

}  // namespace vime::tokenizer
