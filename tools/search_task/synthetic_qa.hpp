// A deterministic search-QA task that needs no download: fictional people (names made of
// syllables), one passage each about where and when they were born and what they made, and
// questions whose answers exist only in those passages. The corpus is Search-R1's format
// ({"id", "contents": "\"Title\"\ntext"}); the prompts are Search-R1's make_prefix. No torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/json.hpp"
#include "vime/retrieval/corpus.hpp"

namespace vime::search_task {

struct Person {
  std::string name;  // "Zorvath Quellin"
  std::string city;  // birthplace
  std::string year;  // birth year, "1873"
  std::string work;  // "the Amber Lantern"
  std::string profession;
};

struct Question {
  std::string question;  // "In which city was Zorvath Quellin born?"
  std::string answer;    // "Mirelund"
};

// `count` distinct people, the same for the same (count, seed).
std::vector<Person> make_people(int64_t count, uint64_t seed);
// One passage per person: "\"Name\"\nName was a painter born in City in 1873. ...".
std::vector<retrieval::Document> make_corpus(const std::vector<Person>& people);
// Three questions per person (city, year, work), in person order.
std::vector<Question> make_questions(const std::vector<Person>& people);

// Search-R1's user prompt for `question` (make_prefix, template "base").
std::string search_r1_prefix(const std::string& question);
// One data row as slime's Search-R1 data: {"prompt": [{"role": "user", "content": prefix}],
// "reward_model": {"ground_truth": {"target": [answer]}, "style": "rule"}}.
Json data_row(const Question& q);

}  // namespace vime::search_task
