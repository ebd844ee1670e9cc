// Grades a JSONL file of {"response", "label", "prompt"?, "metadata"?} objects and writes each with
// "reward" added (`vime reward`). Lines are graded on `workers` threads; output keeps input order.
// A bad line (not JSON, not an object, no "response" string or "label", or a reward model error
// for it) is reported with its line number and left out; the rest still gets graded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::reward {

struct RewardFileOptions {
  std::string input;
  std::string output;
  int workers = 0;  // 0: one per hardware thread
};

struct BadLine {
  int64_t line = 0;  // 1-based
  std::string reason;
};

struct RewardFileReport {
  int64_t graded = 0;
  int64_t blank = 0;
  std::vector<BadLine> bad;
  double reward_sum = 0;  // of the numeric rewards (or reward[--reward-key])
  int64_t numeric = 0;
  double seconds = 0;  // grading only, not reading or writing
};

// Throws UsageError when the input cannot be read or the output cannot be written.
RewardFileReport grade_file(const Args& args, const RewardFileOptions& options);

}  // namespace vime::reward
