// --rm-type gpqa: multiple choice, 1.0 when the letter the response picks is the correct one
// (slime rm_hub/gpqa.py). The correct letter comes from metadata.correct_letter, a letter label, an
// integer label (an index) or the label text found among metadata.choices; without a letter, the
// correct answer's text appearing in the response scores 1.
//
// That text match is slime's gpqa rule as documented (--rm-type gpqa): any substring of the
// normalised response, the label text included. Built with VIME_GPQA_WHOLE_WORD (--rm-type
// gpqa_whole_word) it is the stricter rule of slime's gpqa.py at 643f912 (the committed goldens):
// whole words only, a single-letter label skipped. rm_hub/README.md compares the two.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <vime/hooks.hpp>

#include "common/py_text.hpp"
#include "common/py_value.hpp"
#include "vime/regex.hpp"

namespace {

using vime::Json;
using namespace vime::rm;

std::string strip_chain_of_thought(const std::string& text) {
  size_t pos = text.rfind("</think>");
  return pos == std::string::npos ? text : text.substr(pos + 8);
}

std::string normalize_text(const std::string& text) {
  static const vime::Regex non_alnum("[^a-z0-9]+");
  return strip(non_alnum.sub(" ", lower(text)));
}

std::string upper(std::string s) {
  for (auto& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

std::optional<std::string> extract_letter(const std::string& response,
                                          const std::vector<std::string>& valid_list) {
  if (response.empty()) return std::nullopt;
  std::set<std::string> valid;
  for (const auto& l : valid_list) valid.insert(upper(l));
  std::string text = strip_chain_of_thought(response);
  static const vime::Regex patterns[] = {
      vime::Regex("(?:answer|option|choice)\\s*(?:is|:)?\\s*([A-Z])", {.ignore_case = true}),
      vime::Regex("([A-Z])\\s*(?:is\\s*(?:the)?\\s*correct)", {.ignore_case = true}),
      vime::Regex("final\\s*(?:answer|option)\\s*(?:is|:)?\\s*([A-Z])", {.ignore_case = true}),
  };
  for (const auto& p : patterns) {
    if (auto m = p.search(text)) {
      std::string letter = upper(*(*m)[1]);
      if (valid.count(letter)) return letter;
    }
  }
  static const vime::Regex standalone("\\b([A-Z])\\b");
  auto candidates = standalone.findall(text);
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
    std::string letter = upper(*it);
    if (valid.count(letter)) return letter;
  }
  return std::nullopt;
}

Json reward(const vime::Args& /*args*/, const vime::Sample& sample) {
  const Json& metadata = sample.metadata.is_object() ? sample.metadata : Json::object();
  auto get = [&](const char* key) -> const Json* { return metadata.find(key); };

  std::optional<std::vector<std::string>> choices;
  if (const Json* c = get("choices"); c && !c->is_null()) {
    choices.emplace();
    if (c->is_object()) {
      for (const auto& [k, v] : c->as_object()) choices->push_back(python_str(v));
    } else if (c->is_array()) {
      for (const auto& v : c->as_array()) choices->push_back(python_str(v));
    } else if (c->is_string()) {
      for (size_t i = 0; i < c->as_string().size(); i += utf8_char_size(c->as_string(), i))
        choices->push_back(c->as_string().substr(i, utf8_char_size(c->as_string(), i)));
    }
  }
  bool have_choices = choices && !choices->empty();

  std::vector<std::string> valid_letters;
  if (const Json* v = get("valid_letters"); v && python_truthy(*v) && v->is_array()) {
    for (const auto& l : v->as_array()) valid_letters.push_back(upper(python_str(l)));
  } else if (have_choices) {
    for (size_t i = 0; i < choices->size() && i < 26; ++i)
      valid_letters.push_back(std::string(1, static_cast<char>('A' + i)));
  } else {
    for (char c = 'A'; c <= 'J'; ++c) valid_letters.push_back(std::string(1, c));
  }
  auto is_valid = [&](const std::string& l) {
    return std::find(valid_letters.begin(), valid_letters.end(), l) != valid_letters.end();
  };

  std::string correct_letter;  // "" is Python's None / falsy
  if (const Json* c = get("correct_letter"); c && c->is_string())
    correct_letter = upper(strip(c->as_string()));

  std::optional<std::string> label_text;
  const Json& label = sample.label;
  if (label.is_string()) {
    label_text = strip(label.as_string());
    if (utf8_length(*label_text) == 1 && is_valid(upper(*label_text)) && correct_letter.empty()) {
      correct_letter = upper(*label_text);
    }
  } else if (label.is_number() || label.is_bool()) {
    double idx = label.is_bool() ? (label.as_bool() ? 1 : 0) : std::trunc(label.as_double());
    if (idx >= 0 && idx < static_cast<double>(valid_letters.size())) {
      correct_letter = valid_letters[static_cast<size_t>(idx)];
    }
  }

  std::optional<std::string> correct_answer_set;  // metadata.setdefault("correct_answer", choice)
  if (correct_letter.empty() && have_choices && label_text && !label_text->empty()) {
    std::string normalized_label = normalize_text(*label_text);
    for (size_t idx = 0; idx < choices->size(); ++idx) {
      if (normalize_text((*choices)[idx]) == normalized_label) {
        if (idx >= valid_letters.size())
          throw vime::Error("gpqa reward: more choices than valid_letters");
        correct_letter = valid_letters[idx];
        if (!get("correct_answer")) correct_answer_set = (*choices)[idx];
        break;
      }
    }
  }

  auto extracted = extract_letter(sample.response, valid_letters);
  if (extracted && !correct_letter.empty()) return *extracted == correct_letter ? 1.0 : 0.0;

  std::vector<std::string> candidates;
  if (!correct_letter.empty() && have_choices) {
    auto it = std::find(valid_letters.begin(), valid_letters.end(), correct_letter);
    if (it != valid_letters.end()) {
      size_t idx = static_cast<size_t>(it - valid_letters.begin());
      if (idx < choices->size()) candidates.push_back((*choices)[idx]);
    }
  }
  for (const char* key : {"correct_answer", "answer_text"}) {
    const Json* value = get(key);
    if (value && python_truthy(*value)) {
      candidates.push_back(python_str(*value));
    } else if (std::string(key) == "correct_answer" && correct_answer_set &&
               !correct_answer_set->empty()) {
      candidates.push_back(*correct_answer_set);
    }
  }
#ifdef VIME_GPQA_WHOLE_WORD
  constexpr bool kWholeWord = true;
#else
  constexpr bool kWholeWord = false;
#endif
  const bool single_letter_label =
      label_text && utf8_length(*label_text) == 1 && is_valid(upper(*label_text));
  if (label_text && !label_text->empty() && !(kWholeWord && single_letter_label)) {
    candidates.push_back(*label_text);
  }
  const std::string normalized_response = normalize_text(strip_chain_of_thought(sample.response));
  const std::string padded_response = " " + normalized_response + " ";
  for (const auto& text : candidates) {
    if (text.empty()) continue;
    std::string target = normalize_text(text);
    if (target.empty()) continue;
    if (kWholeWord ? contains(padded_response, " " + target + " ")
                   : contains(normalized_response, target))
      return 1.0;
  }
  if (extracted && correct_letter.empty() && label_text && !label_text->empty()) {
    return *extracted == upper(strip(*label_text)) ? 1.0 : 0.0;
  }
  return 0.0;
}

}  // namespace

VIME_REWARD_PLUGIN(reward)
