#include "f1/f1_score.hpp"

#include <cstring>
#include <map>

#include "common/py_text.hpp"
#include "vime/regex.hpp"

namespace vime::rm {

std::string normalize_answer(std::string_view text) {
  std::string s = lower(text);
  std::string no_punct;
  static constexpr const char* kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  for (char c : s)
    if (c == '\0' || std::strchr(kPunctuation, c) == nullptr) no_punct.push_back(c);
  static const Regex articles("\\b(a|an|the)\\b");
  std::string out;
  for (const auto& word : split_whitespace(articles.sub(" ", no_punct))) {
    if (!out.empty()) out.push_back(' ');
    out += word;
  }
  return out;
}

F1 f1_score(std::string_view prediction, std::string_view ground_truth) {
  std::string pred = normalize_answer(prediction);
  std::string gold = normalize_answer(ground_truth);
  auto special = [](const std::string& s) { return s == "yes" || s == "no" || s == "noanswer"; };
  if ((special(pred) || special(gold)) && pred != gold) return {};
  auto pred_tokens = split_whitespace(pred);
  auto gold_tokens = split_whitespace(gold);
  std::map<std::string, int> counts;
  for (const auto& t : gold_tokens) ++counts[t];
  int same = 0;
  for (const auto& t : pred_tokens) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  }
  if (same == 0) return {};
  F1 r;
  r.precision = 1.0 * same / static_cast<double>(pred_tokens.size());
  r.recall = 1.0 * same / static_cast<double>(gold_tokens.size());
  r.f1 = (2 * r.precision * r.recall) / (r.precision + r.recall);
  return r;
}

}  // namespace vime::rm
