#include "qa_em_format.hpp"

#include <array>

#include "common/py_text.hpp"
#include "f1/f1_score.hpp"
#include "vime/error.hpp"
#include "vime/regex.hpp"

namespace search_r1 {
namespace {

using vime::Json;

// Python's int/float arithmetic on the score keywords: int op int stays int.
Json add(const Json& a, const Json& b, int sign = 1) {
  if (a.is_int() && b.is_int()) return Json(a.as_int() + sign * b.as_int());
  return Json(a.as_double() + sign * b.as_double());
}

size_t count_occurrences(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

constexpr std::array<std::string_view, 4> kTags = {"think", "search", "information", "answer"};

// re.split(r"(</?(?:think|search|information|answer)>)", content): text and tags alternating.
std::vector<std::string> split_keeping_tags(std::string_view content) {
  static const vime::Regex tag("</?(?:think|search|information|answer)>");
  std::vector<std::string> parts;
  size_t last = 0;
  tag.for_each_match(content, [&](size_t start, size_t end) {
    parts.emplace_back(content.substr(last, start - last));
    parts.emplace_back(content.substr(start, end - start));
    last = end;
  });
  parts.emplace_back(content.substr(last));
  return parts;
}

bool fail(std::string* reason, std::string why) {
  if (reason) *reason = std::move(why);
  return false;
}

}  // namespace

bool is_valid_sequence(std::string_view text, std::string* reason) {
  static const vime::Regex assistant("<\\|im_start\\|>assistant\\s*");
  size_t marker_end = std::string_view::npos;
  assistant.for_each_match(text, [&](size_t, size_t end) {
    if (marker_end == std::string_view::npos) marker_end = end;
  });
  if (marker_end == std::string_view::npos) return fail(reason, "Missing assistant marker");
  const std::string_view content = text.substr(marker_end);

  for (std::string_view tag : kTags) {
    const size_t opening = count_occurrences(content, "<" + std::string(tag) + ">");
    const size_t closing = count_occurrences(content, "</" + std::string(tag) + ">");
    if (opening != closing) {
      return fail(reason, "Mismatch in " + std::string(tag) + " tags: " + std::to_string(opening) +
                              " opening vs " + std::to_string(closing) + " closing tags");
    }
  }

  std::string state = "start";
  const auto parts = split_keeping_tags(content);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (vime::rm::strip(part).empty()) continue;
    if (i % 2 == 1) {  // a tag
      if (part == "<think>" && (state == "start" || state == "information")) {
        state = "in_think";
      } else if (part == "</think>" && state == "in_think") {
        state = "after_think";
      } else if (part == "<search>" && state == "after_think") {
        state = "in_search";
      } else if (part == "</search>" && state == "in_search") {
        state = "after_search";
      } else if (part == "<information>" && state == "after_search") {
        state = "in_information";
      } else if (part == "</information>" && state == "in_information") {
        state = "information";
      } else if (part == "<answer>" && state == "after_think") {
        state = "in_answer";
      } else if (part == "</answer>" && state == "in_answer") {
        state = "end";
      } else {
        return fail(reason, "Unexpected tag " + part + " in state " + state);
      }
    } else if (state == "in_think" || state == "in_search" || state == "in_information" ||
               state == "in_answer") {
      // content is allowed inside tags
    } else if (state == "start" || state == "after_think" || state == "after_search" ||
               state == "information") {
      return fail(reason, "Unexpected content '" + vime::rm::strip(part) +
                              "' between tags (state: " + state + ")");
    } else {
      return fail(reason, "Unexpected content in state " + state);
    }
  }
  if (state != "end") return fail(reason, "Incomplete sequence, ended in state " + state);
  if (reason) *reason = "Valid sequence format";
  return true;
}

bool extract_solution(std::string_view text, std::string& answer) {
  static const vime::Regex pattern("(?s)<answer>(.*?)</answer>");
  size_t matches = 0, last_start = 0, last_end = 0;
  pattern.for_each_match(text, [&](size_t start, size_t end) {
    ++matches;
    last_start = start;
    last_end = end;
  });
  if (matches <= 1) return false;
  constexpr size_t kOpen = 8, kClose = 9;  // "<answer>", "</answer>"
  answer = vime::rm::strip(text.substr(last_start + kOpen, last_end - last_start - kOpen - kClose));
  return true;
}

std::vector<std::string> extract_information_blocks(std::string_view text) {
  static const vime::Regex pattern("(?s)<information>(.*?)</information>");
  std::vector<std::string> blocks;
  for (const auto& block : pattern.findall(text)) blocks.push_back(vime::rm::strip(block));
  return blocks;
}

bool is_retrieval_correct(std::string_view text, const std::vector<std::string>& golden_answers) {
  for (const auto& block : extract_information_blocks(text)) {
    const std::string normalized_block = vime::rm::normalize_answer(block);
    for (const auto& golden : golden_answers) {
      if (normalized_block.find(vime::rm::normalize_answer(golden)) != std::string::npos) {
        return true;
      }
    }
  }
  return false;
}

bool em_check(std::string_view prediction, const std::vector<std::string>& golden_answers) {
  const std::string normalized = vime::rm::normalize_answer(prediction);
  for (const auto& golden : golden_answers) {
    if (vime::rm::normalize_answer(golden) == normalized) return true;
  }
  return false;
}

Json compute_score_em(std::string_view solution, const std::vector<std::string>& targets,
                      const EmScores& s) {
  const bool valid = is_valid_sequence(solution);
  const bool retrieval_correct = valid && is_retrieval_correct(solution, targets);
  std::string answer;
  if (!extract_solution(solution, answer)) {
    if (!valid) return Json(0);
    return retrieval_correct ? add(s.structure_format_score, s.retrieval_score)
                             : s.structure_format_score;
  }
  if (em_check(answer, targets)) {
    return valid ? s.score : add(s.score, s.structure_format_score, -1);
  }
  if (valid) {
    return retrieval_correct ? add(s.structure_format_score, s.retrieval_score)
                             : s.structure_format_score;
  }
  return s.final_format_score;
}

std::vector<std::string> golden_targets(const Json& label) {
  const Json* truth = label.is_object() ? label.find("ground_truth") : nullptr;
  const Json* target = truth && truth->is_object() ? truth->find("target") : nullptr;
  if (target && target->is_string()) return {target->as_string()};
  if (target && target->is_array()) {
    std::vector<std::string> out;
    for (const Json& t : target->as_array()) {
      if (!t.is_string()) break;
      out.push_back(t.as_string());
    }
    if (out.size() == target->size()) return out;
  }
  throw vime::Error(
      "search_r1 reward: the label must be {\"ground_truth\": {\"target\": [strings]}} (slime's "
      "Search-R1 form); got " +
      label.dump());
}

}  // namespace search_r1
