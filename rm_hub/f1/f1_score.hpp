// SQuAD/HotpotQA token F1 (slime rm_hub/f1.py).
#pragma once

#include <string>
#include <string_view>

namespace vime::rm {

// Lowercase, drop ASCII punctuation, drop the articles a/an/the, collapse whitespace.
std::string normalize_answer(std::string_view text);

struct F1 {
  double f1 = 0, precision = 0, recall = 0;
};
// (0, 0, 0) when either side normalises to yes/no/noanswer and they differ, or nothing is shared.
F1 f1_score(std::string_view prediction, std::string_view ground_truth);

}  // namespace vime::rm
