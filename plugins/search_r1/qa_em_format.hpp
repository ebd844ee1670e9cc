// Search-R1's exact-match reward (slime examples/search-r1/qa_em_format.py, itself from Search-R1's
// verl/utils/reward_score/qa_em_format.py), reproduced branch for branch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vime/json.hpp"

namespace search_r1 {

// is_valid_sequence: the text after "<|im_start|>assistant" must be think -> (search ->
// information -> think)* -> answer with only whitespace between tags. `reason` says why not.
bool is_valid_sequence(std::string_view text, std::string* reason = nullptr);
// extract_solution: the last <answer>...</answer> (stripped) when there are two or more (the
// prompt's own example is one); empty when there are fewer.
bool extract_solution(std::string_view text, std::string& answer);
// The stripped contents of every <information>...</information>.
std::vector<std::string> extract_information_blocks(std::string_view text);
// Some golden answer, normalised, is a substring of some normalised information block.
bool is_retrieval_correct(std::string_view text, const std::vector<std::string>& golden_answers);
// SQuAD-normalised equality with any golden answer.
bool em_check(std::string_view prediction, const std::vector<std::string>& golden_answers);

// compute_score_em's keyword arguments. Numbers stay Json so an int default returns an int, as
// Python does (0, not 0.0).
struct EmScores {
  vime::Json structure_format_score = vime::Json(0);
  vime::Json final_format_score = vime::Json(0);
  vime::Json retrieval_score = vime::Json(0);
  vime::Json score = vime::Json(1.0);
};

// compute_score_em(solution_str, ground_truth): `targets` is ground_truth["target"].
vime::Json compute_score_em(std::string_view solution, const std::vector<std::string>& targets,
                            const EmScores& scores = {});

// ground_truth["target"] of a label {"ground_truth": {"target": [...] or "..."}}; throws
// vime::Error naming the sample's label otherwise.
std::vector<std::string> golden_targets(const vime::Json& label);

}  // namespace search_r1
