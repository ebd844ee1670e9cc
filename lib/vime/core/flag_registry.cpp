#include "vime/core/flag_registry.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <set>

#include "vime/core/flags/flag_groups.hpp"
#include "vime/error.hpp"

namespace vime::core {
namespace {

std::vector<std::string_view> split_bar(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    auto bar = s.find('|');
    out.push_back(s.substr(0, bar));
    if (bar == std::string_view::npos) break;
    s.remove_prefix(bar + 1);
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

[[noreturn]] void bad_value(const FlagSpec& spec, std::string_view token,
                            std::string_view expected) {
  throw UsageError(std::string(spec.name) + ": '" + std::string(token) + "' is not " +
                   std::string(expected));
}

Json parse_int(const FlagSpec& spec, const std::string& token) {
  int64_t v = 0;
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, v);
  if (ec != std::errc() || ptr != end) {
    // Python's int() accepts "1e3"? No: argparse type=int rejects it too. Accept "+5" like int().
    if (!token.empty() && token[0] == '+') return parse_int(spec, token.substr(1));
    bad_value(spec, token, "an integer");
  }
  return Json(v);
}

Json parse_float(const FlagSpec& spec, const std::string& token) {
  if (token.empty()) bad_value(spec, token, "a number");
  char* end = nullptr;
  double v = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size()) bad_value(spec, token, "a number");
  return Json(v);
}

void check_choice(const FlagSpec& spec, const std::string& token) {
  if (spec.choices.empty()) return;
  auto choices = split_bar(spec.choices);
  if (std::find(choices.begin(), choices.end(), token) != choices.end()) return;
  std::string list;
  for (auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  bad_value(spec, token, "one of " + list);
}

Json convert_one(const FlagSpec& spec, const std::string& token) {
  switch (spec.kind) {
    case FlagKind::kInt:
    case FlagKind::kIntList: {
      Json v = parse_int(spec, token);
      check_choice(spec, token);
      return v;
    }
    case FlagKind::kFloat:
    case FlagKind::kFloatList:
      return parse_float(spec, token);
    case FlagKind::kJson: {
      try {
        return Json::parse(token, spec.name);
      } catch (const Error& e) {
        throw UsageError(e.what());
      }
    }
    default:
      check_choice(spec, token);
      return Json(token);
  }
}

std::vector<std::string> split_spaces(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

std::string dest_of(const FlagSpec& spec) {
  if (!spec.dest.empty()) return std::string(spec.dest);
  std::string d(spec.name.substr(std::min(spec.name.find_first_not_of('-'), spec.name.size())));
  for (char& c : d) c = c == '-' ? '_' : static_cast<char>(std::tolower(c));
  return d;
}

bool is_positional(const FlagSpec& spec) { return !spec.name.starts_with("-"); }

bool is_switch(const FlagSpec& spec) {
  return spec.kind == FlagKind::kStoreTrue || spec.kind == FlagKind::kStoreFalse ||
         spec.kind == FlagKind::kBoolOptional;
}

bool is_list(const FlagSpec& spec) {
  return spec.kind == FlagKind::kIntList || spec.kind == FlagKind::kFloatList ||
         spec.kind == FlagKind::kStringList || spec.kind == FlagKind::kStringAppend;
}

Json default_value(const FlagSpec& spec) {
  switch (spec.kind) {
    case FlagKind::kStoreTrue:
      return Json(false);
    case FlagKind::kStoreFalse:
      return Json(true);
    case FlagKind::kBoolOptional:
      if (spec.default_value == nullptr) return Json();
      return Json(std::string_view(spec.default_value) == "true");
    default:
      break;
  }
  if (spec.default_value == nullptr) return Json();
  if (is_list(spec)) {
    auto tokens = split_spaces(spec.default_value);
    return convert_tokens(spec, tokens);
  }
  std::string token(spec.default_value);
  return convert_tokens(spec, std::span<const std::string>(&token, 1));
}

Json convert_tokens(const FlagSpec& spec, std::span<const std::string> tokens) {
  if (is_list(spec)) {
    Json out = Json::array();
    for (const auto& t : tokens) out.push_back(convert_one(spec, t));
    return out;
  }
  if (tokens.size() != 1) {
    throw UsageError(std::string(spec.name) + " expects one value, got " +
                     std::to_string(tokens.size()));
  }
  return convert_one(spec, tokens[0]);
}

std::string display_value(const Json& value) {
  if (value.is_null()) return "None";
  if (value.is_string()) return value.as_string();
  if (value.is_array()) {
    std::string out;
    for (const auto& e : value.as_array()) {
      if (!out.empty()) out += ' ';
      out += display_value(e);
    }
    return out;
  }
  return value.dump();
}

FlagRegistry::FlagRegistry(std::string_view command, std::vector<FlagGroup> groups)
    : command_(command), groups_(std::move(groups)) {
  index();
}

FlagRegistry::FlagRegistry(std::string_view command, std::vector<FlagGroup> groups,
                           const FlagRegistry& base)
    : command_(command), groups_(std::move(groups)) {
  std::set<std::string_view> own;
  for (const auto& group : groups_) {
    for (const auto& spec : group.flags) own.insert(spec.name);
  }
  for (const auto& group : base.groups()) {
    auto replaced = [&](const FlagSpec& spec) { return own.count(spec.name) != 0; };
    if (std::none_of(group.flags.begin(), group.flags.end(), replaced)) {
      groups_.push_back(group);
      continue;
    }
    auto& kept = kept_.emplace_back();
    std::copy_if(group.flags.begin(), group.flags.end(), std::back_inserter(kept),
                 [&](const FlagSpec& spec) { return !replaced(spec); });
    groups_.push_back({group.name, group.title, kept});
  }
  index();
}

void FlagRegistry::index() {
  auto add_name = [&](std::string_view name, const FlagSpec* spec) {
    if (!by_name_.emplace(std::string(name), spec).second) {
      throw Error("internal: flag " + std::string(name) + " is declared twice");
    }
  };
  for (const auto& group : groups_) {
    for (const auto& spec : group.flags) {
      if (is_positional(spec)) {
        positionals_.push_back(&spec);
      } else {
        add_name(spec.name, &spec);
      }
      for (auto alias : split_bar(spec.aliases)) add_name(alias, &spec);
      if (!by_dest_.emplace(dest_of(spec), &spec).second) {
        throw Error("internal: dest " + dest_of(spec) + " is declared twice");
      }
      group_[&spec] = &group;
    }
  }
}

const FlagRegistry& FlagRegistry::instance() {
  static const FlagRegistry registry("train", {
                                                  flags::general(),
                                                  flags::cluster(),
                                                  flags::rollout(),
                                                  flags::vllm(),
                                                  flags::data(),
                                                  flags::algorithm(),
                                                  flags::reward(),
                                                  flags::eval(),
                                                  flags::checkpoint(),
                                                  flags::logging(),
                                                  flags::fault_tolerance(),
                                                  flags::hooks(),
                                                  flags::weight_sync(),
                                                  flags::train_backend(),
                                                  flags::debug(),
                                                  flags::model(),
                                                  flags::parallel(),
                                                  flags::recompute(),
                                                  flags::optimizer(),
                                                  flags::precision(),
                                                  flags::megatron_misc(),
                                              });
  return registry;
}

const FlagSpec* FlagRegistry::find(std::string_view name, bool* negated) const {
  if (negated != nullptr) *negated = false;
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  if (name.starts_with("--no-")) {
    std::string positive = "--" + std::string(name.substr(5));
    auto it = by_name_.find(positive);
    if (it != by_name_.end() && it->second->kind == FlagKind::kBoolOptional) {
      if (negated != nullptr) *negated = true;
      return it->second;
    }
  }
  return nullptr;
}

const FlagSpec* FlagRegistry::find_by_dest(std::string_view dest) const {
  auto it = by_dest_.find(dest);
  return it == by_dest_.end() ? nullptr : it->second;
}

const FlagGroup* FlagRegistry::group_of(const FlagSpec& spec) const {
  auto it = group_.find(&spec);
  return it == group_.end() ? nullptr : it->second;
}

std::string FlagRegistry::nearest(std::string_view name) const {
  std::vector<std::string_view> best;
  // About one edit in three letters of the name (dashes aside): "--bogus" is not "--load".
  const size_t letters = name.size() - std::min(name.find_first_not_of('-'), name.size());
  size_t best_distance = std::max<size_t>(1, letters / 3) + 1;
  for (const auto& [known, _] : by_name_) {
    size_t d = edit_distance(name, known);
    // A known flag that contains what was typed ("--temperature" -> "--rollout-temperature") is
    // close too.
    if (name.size() > 6 && known.find(name.substr(2)) != std::string::npos)
      d = std::min<size_t>(d, 2);
    if (d < best_distance) {
      best_distance = d;
      best.clear();
    }
    if (d == best_distance && best.size() < 3) best.push_back(known);
  }
  std::string out;
  for (size_t i = 0; i < best.size(); ++i) {
    out += (i == 0 ? "" : (i + 1 == best.size() ? " or " : ", ")) + std::string(best[i]);
  }
  return out;
}

}  // namespace vime::core
