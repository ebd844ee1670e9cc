#include "vime/tokenizer/pre_tokenizer.hpp"

#include <algorithm>

#include "vime/tokenizer/byte_level.hpp"
#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer {
namespace {

struct Span {
  size_t start, end;
  bool is_match;
};

// HF's SplitDelimiterBehavior applied to spans that cover the text, then empty pieces dropped.
void emit_with_behavior(std::string_view text, bool first, std::vector<Span>& spans,
                        SplitBehavior behavior, PieceSink emit) {
  std::vector<Span> pieces;
  pieces.reserve(spans.size());
  switch (behavior) {
    case SplitBehavior::kIsolated:
      pieces = spans;
      break;
    case SplitBehavior::kRemoved:
      for (const Span& s : spans) {
        if (!s.is_match) pieces.push_back(s);
      }
      break;
    case SplitBehavior::kContiguous:
      for (const Span& s : spans) {
        if (!pieces.empty() && pieces.back().is_match == s.is_match) {
          pieces.back().end = s.end;
        } else {
          pieces.push_back(s);
        }
      }
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !pieces.empty()) {
          pieces.back().end = s.end;
        } else {
          pieces.push_back(s);
        }
        previous_match = s.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous_match = false;
      for (size_t i = spans.size(); i-- > 0;) {
        const Span& s = spans[i];
        if (s.is_match && !previous_match && !pieces.empty()) {
          pieces.back().start = s.start;
        } else {
          pieces.push_back(s);
        }
        previous_match = s.is_match;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
    }
  }
  for (const Span& s : pieces) {
    if (s.end > s.start) emit(text.substr(s.start, s.end - s.start), first && s.start == 0);
  }
}

// Spans of a per-character predicate: each matching character alone, the runs between as one span.
template <class Predicate>
std::vector<Span> char_spans(std::string_view text, Predicate matches) {
  std::vector<Span> spans;
  size_t last = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const char32_t cp = next_code_point(text, pos);
    if (matches(cp)) {
      if (last < start) spans.push_back({last, start, false});
      spans.push_back({start, pos, true});
      last = pos;
    }
  }
  if (last < text.size()) spans.push_back({last, text.size(), false});
  return spans;
}

}  // namespace

void SplitPreTokenizer::split(std::string_view text, bool first, PieceSink emit) const {
  if (behavior_ == SplitBehavior::kIsolated) {  // the hot path (Qwen, Llama-3): no span list
    size_t last = 0;
    regex_.for_each_match(text, [&](size_t start, size_t end) {
      if (start > last) emit(text.substr(last, start - last), first && last == 0);
      if (end > start) emit(text.substr(start, end - start), first && start == 0);
      last = end;
    });
    if (last < text.size()) emit(text.substr(last), first && last == 0);
    return;
  }
  std::vector<Span> spans;
  size_t last = 0;
  regex_.for_each_match(text, [&](size_t start, size_t end) {
    if (start > last) spans.push_back({last, start, invert_});
    spans.push_back({start, end, !invert_});
    last = end;
  });
  if (last < text.size()) spans.push_back({last, text.size(), invert_});
  emit_with_behavior(text, first, spans, behavior_, emit);
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
    : add_prefix_space_(add_prefix_space) {
  if (use_regex) {
    regex_split_ =
        std::make_unique<SplitPreTokenizer>(kGpt2SplitPattern, SplitBehavior::kIsolated, false);
  }
}

void ByteLevelPreTokenizer::split(std::string_view text, bool first, PieceSink emit) const {
  std::string prefixed;
  if (add_prefix_space_ && !text.empty() && text.front() != ' ') {
    prefixed.reserve(text.size() + 1);
    prefixed.push_back(' ');
    prefixed.append(text);
    text = prefixed;
  }
  if (regex_split_) {
    regex_split_->split(text, first, emit);
  } else if (!text.empty()) {
    emit(text, first);
  }
}

void DigitsPreTokenizer::split(std::string_view text, bool first, PieceSink emit) const {
  auto spans = char_spans(text, [](char32_t cp) { return is_numeric(cp); });
  emit_with_behavior(text, first, spans,
                     individual_digits_ ? SplitBehavior::kIsolated : SplitBehavior::kContiguous,
                     emit);
}

void MetaspacePreTokenizer::split(std::string_view text, bool first, PieceSink emit) const {
  std::string replaced;
  replaced.reserve(text.size() + replacement_.size());
  const bool starts_with_replacement =
      text.substr(0, replacement_.size()) == replacement_ || (!text.empty() && text.front() == ' ');
  if (!starts_with_replacement &&
      (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && first))) {
    replaced += replacement_;
  }
  for (char c : text) {
    if (c == ' ') {
      replaced += replacement_;
    } else {
      replaced.push_back(c);
    }
  }
  if (!split_) {
    if (!replaced.empty()) emit(replaced, first);
    return;
  }
  std::vector<Span> spans;
  size_t last = 0;
  for (size_t pos = replaced.find(replacement_); pos != std::string::npos;
       pos = replaced.find(replacement_, pos + replacement_.size())) {
    if (pos > last) spans.push_back({last, pos, false});
    spans.push_back({pos, pos + replacement_.size(), true});
    last = pos + replacement_.size();
  }
  if (last < replaced.size()) spans.push_back({last, replaced.size(), false});
  emit_with_behavior(replaced, first, spans, SplitBehavior::kMergedWithNext, emit);
}

void WhitespaceSplitPreTokenizer::split(std::string_view text, bool first, PieceSink emit) const {
  auto spans = char_spans(text, [](char32_t cp) { return is_whitespace(cp); });
  emit_with_behavior(text, first, spans, SplitBehavior::kRemoved, emit);
}

void SequencePreTokenizer::split(std::string_view text, bool first, PieceSink emit) const {
  run(0, text, first, emit);
}

void SequencePreTokenizer::run(size_t stage, std::string_view text, bool first,
                               PieceSink emit) const {
  if (stage == stages_.size()) {
    emit(text, first);
    return;
  }
  stages_[stage]->split(text, first, [&](std::string_view piece, bool piece_first) {
    run(stage + 1, piece, piece_first, emit);
  });
}

}  // namespace vime::tokenizer
