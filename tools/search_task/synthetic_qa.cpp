#include "synthetic_qa.hpp"

#include <array>
#include <set>

namespace vime::search_task {
namespace {

// splitmix64: the same stream on every platform (no std distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  template <class C>
  const auto& pick(const C& items) {
    return items[next() % items.size()];
  }

 private:
  uint64_t state_;
};

constexpr std::array<const char*, 24> kSyllables = {
    "zor", "vath", "quel", "lin",  "mir", "e",   "lund", "os", "ter", "ha",  "ven", "kal",
    "dra", "bex",  "ny",   "thar", "ul",  "sen", "ria",  "mo", "rik", "tal", "ion", "fey"};
constexpr std::array<const char*, 20> kProfessions = {
    "painter",    "astronomer", "cartographer", "composer", "glassblower", "architect", "botanist",
    "clockmaker", "poet",       "sculptor",     "engineer", "chemist",     "weaver",    "navigator",
    "luthier",    "historian",  "potter",       "mapmaker", "inventor",    "bookbinder"};
constexpr std::array<const char*, 16> kAdjectives = {
    "Amber", "Silent", "Copper",  "Hollow", "Violet",    "Northern", "Gilded", "Broken",
    "Azure", "Hidden", "Crimson", "Lunar",  "Wandering", "Iron",     "Velvet", "Frozen"};
constexpr std::array<const char*, 16> kNouns = {
    "Lantern", "Orchard", "Compass", "Tide",   "Meridian", "Harbor",  "Atlas", "Spire",
    "Loom",    "Chorus",  "Archive", "Beacon", "Garden",   "Cascade", "Vault", "Prism"};

std::string capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string word(Rng& rng, int syllables) {
  std::string w;
  for (int i = 0; i < syllables; ++i) w += rng.pick(kSyllables);
  return capitalized(w);
}

}  // namespace

std::vector<Person> make_people(int64_t count, uint64_t seed) {
  Rng rng(seed);
  std::set<std::string> names;
  std::vector<Person> people;
  people.reserve(static_cast<size_t>(count));
  while (static_cast<int64_t>(people.size()) < count) {
    Person p;
    p.name = word(rng, 2) + " " + word(rng, 2 + static_cast<int>(rng.next() % 2));
    if (!names.insert(p.name).second) continue;
    p.city = word(rng, 2 + static_cast<int>(rng.next() % 2));
    p.year = std::to_string(1700 + rng.next() % 300);
    p.work = std::string("the ") + rng.pick(kAdjectives) + " " + rng.pick(kNouns);
    p.profession = rng.pick(kProfessions);
    people.push_back(std::move(p));
  }
  return people;
}

std::vector<retrieval::Document> make_corpus(const std::vector<Person>& people) {
  std::vector<retrieval::Document> docs;
  docs.reserve(people.size());
  for (size_t i = 0; i < people.size(); ++i) {
    const Person& p = people[i];
    docs.push_back({std::to_string(i), "\"" + p.name + "\"\n" + p.name + " was a " + p.profession +
                                           " born in " + p.city + " in " + p.year + ". " + p.name +
                                           " is best known for " + p.work + "."});
  }
  return docs;
}

std::vector<Question> make_questions(const std::vector<Person>& people) {
  std::vector<Question> questions;
  questions.reserve(people.size() * 3);
  for (const Person& p : people) {
    questions.push_back({"In which city was " + p.name + " born?", p.city});
    questions.push_back({"In what year was " + p.name + " born?", p.year});
    questions.push_back({"What is " + p.name + " best known for?", p.work});
  }
  return questions;
}

std::string search_r1_prefix(const std::string& question) {
  return "Answer the given question. You must conduct reasoning inside <think> and </think> "
         "first every time you get new information. After reasoning, if you find you lack some "
         "knowledge, you can call a search engine by <search> query </search> and it will return "
         "the top searched results between <information> and </information>. You can search as "
         "many times as your want. If you find no further external knowledge needed, you can "
         "directly provide the answer inside <answer> and </answer>, without detailed "
         "illustrations. For example, <answer> Beijing </answer>. Question: " +
         question + "\n";
}

Json data_row(const Question& q) {
  Json message = Json::object();
  message["role"] = "user";
  message["content"] = search_r1_prefix(q.question);
  Json truth = Json::object();
  truth["target"] = Json::Array{Json(q.answer)};
  Json reward_model = Json::object();
  reward_model["ground_truth"] = truth;
  reward_model["style"] = "rule";
  Json row = Json::object();
  row["prompt"] = Json::Array{message};
  row["reward_model"] = reward_model;
  row["data_source"] = "synthetic_qa";
  return row;
}

}  // namespace vime::search_task
