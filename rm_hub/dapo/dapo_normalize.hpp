// DAPO's answer normalisation and scoring (slime math_dapo_utils.py, from verl / Minerva).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vime::rm {

std::string normalize_final_answer(std::string_view final_answer);

struct DapoScore {
  double score = -1.0;  // 1.0 correct, -1.0 otherwise
  bool acc = false;
  std::optional<std::string> pred;  // None only in strict-box mode without a box
};
// compute_score(solution, ground_truth, strict_box_verify). Throws vime::Error when the ground
// truth is not a number (slime: int(float(gt)) raises).
DapoScore dapo_compute_score(std::string_view solution, const std::string& ground_truth,
                             bool strict_box_verify = false);

}  // namespace vime::rm
