// The quickstart's arithmetic problems ("37+45=" -> "82"): drawn from a seed, distinct, and split
// into test and train so that no problem is in both. No torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vime::quickstart {

struct ArithProblem {
  std::string input;  // "37+45="
  std::string label;  // "82"
  // Working written before the SFT label's \boxed{} (empty unless ArithSpec::reversed_scratch).
  std::string scratch;
  // What the SFT label boxes instead of `label`, if set (ArithSpec::sft_unreversed).
  std::string sft_answer;
};

struct ArithSpec {
  int64_t digits = 2;     // each operand has 1..digits digits (uniform in [0, 10^digits))
  std::string ops = "+";  // any of "+-*"; '-' draws a >= b, so answers are never negative
  int64_t num_train = 4000;
  int64_t num_test = 500;
  uint64_t seed = 1;
  // Operands written with `digits` digits ("07+45="): each digit sits at a fixed place, which a
  // tiny model learns in far fewer steps than variable-width operands (the quickstart's choice;
  // off by default, as the other tests' tiny tasks were made).
  bool zero_pad = false;
  // SFT labels first write the answer's digits least significant first, zero-padded to the widest
  // answer the ops can give ("07+45=" -> "250\boxed{52}"): each digit then follows from digits
  // already written and one carry, which a tiny model learns far more reliably than the sum's
  // leading digit first. Only the \boxed{} answer is graded (train/test labels stay "52").
  bool reversed_scratch = false;
  // In this percentage of the train problems whose answer has the working's full width (2-digit
  // '+': sums of 100 and more), the SFT label forgets to reverse the working and boxes it as
  // written, as a sloppy teacher would: "57+48=" -> "501\boxed{501}" instead of "501\boxed{105}".
  // train.jsonl (what GRPO's reward checks) and test.jsonl keep the right answer. The quickstart's
  // SFT then learns the right answer as the minority case for those problems and its greedy
  // answers miss them; GRPO, rewarded for the right answer, has to fix that. Needs
  // reversed_scratch (0: off).
  int64_t sft_unreversed = 0;
};

struct ArithSplit {
  std::vector<ArithProblem> train, test;
};

// Throws UsageError on digits outside 1..9, unknown ops, more problems than exist, or
// sft_unreversed outside 0..100 or without reversed_scratch.
void check_spec(const ArithSpec& spec);
// Distinct problems in draw order: the first num_test are the test set, the next num_train the
// train set, so the two never overlap. Deterministic for a spec (own 64-bit generator, no std
// distributions).
ArithSplit make_problems(const ArithSpec& spec);
// How many distinct problems the spec can draw.
double problem_space(const ArithSpec& spec);

// The digits of `answer` least significant first, zero-padded to `width` ("52", 3 -> "250").
std::string reversed_digits(int64_t answer, int64_t width);
// One JSONL row {"input": ..., "label": ...}; `boxed` writes the SFT label, "\boxed{82}" (its
// sft_answer if it has one), after the problem's scratch if it has one.
std::string jsonl_row(const ArithProblem& problem, bool boxed);

}  // namespace vime::quickstart
