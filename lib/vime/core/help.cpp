#include "vime/core/help.hpp"

#include <algorithm>

#include "vime/error.hpp"

namespace vime::core {
namespace {

std::string metavar(const FlagSpec& spec) {
  if (!spec.choices.empty()) {
    std::string c(spec.choices);
    std::replace(c.begin(), c.end(), '|', ',');
    return "{" + c + "}" + (is_list(spec) ? " ..." : "");
  }
  switch (spec.kind) {
    case FlagKind::kInt:
      return "INT";
    case FlagKind::kFloat:
      return "FLOAT";
    case FlagKind::kString:
      return "STR";
    case FlagKind::kJson:
      return "JSON";
    case FlagKind::kIntList:
      return "INT [INT ...]";
    case FlagKind::kFloatList:
      return "FLOAT [FLOAT ...]";
    case FlagKind::kStringList:
      return "STR [STR ...]";
    case FlagKind::kStringAppend:
      return "STR (repeatable)";
    default:
      return "";
  }
}

}  // namespace

std::string flags_help(std::string_view only_group, const FlagRegistry& registry) {
  std::string out;
  for (const auto& group : registry.groups()) {
    if (!only_group.empty() && group.name != only_group) continue;
    out.append("\n").append(group.title).append(" [").append(group.name).append("]:\n");
    for (const auto& spec : group.flags) {
      std::string head = "  " + std::string(spec.name);
      if (spec.kind == FlagKind::kBoolOptional)
        head = "  --[no-]" + std::string(spec.name.substr(2));
      std::string mv = metavar(spec);
      if (!mv.empty() && (!is_positional(spec) || !spec.choices.empty())) head += " " + mv;
      if (!spec.aliases.empty()) {
        std::string aliases(spec.aliases);
        std::replace(aliases.begin(), aliases.end(), '|', ',');
        head += " (alias " + aliases + ")";
      }
      std::string text(spec.help);
      if (spec.kind != FlagKind::kStoreTrue && spec.kind != FlagKind::kStoreFalse &&
          spec.default_value != nullptr) {
        text += " (default: " + std::string(spec.default_value) + ")";
      }
      if (spec.required) text += " (required)";
      if (spec.support == Support::kNoEffect) text += " [no effect in vime]";
      if (spec.support == Support::kNotYet) text += " [not supported yet]";
      constexpr size_t kColumn = 44;
      if (head.size() + 2 > kColumn) {
        out += head + "\n" + std::string(kColumn, ' ') + text + "\n";
      } else {
        out += head + std::string(kColumn - head.size(), ' ') + text + "\n";
      }
    }
  }
  return out;
}

std::optional<std::string> help_if_asked(std::span<const std::string> tokens,
                                         std::string_view usage, const FlagRegistry& registry) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] != "--help" && tokens[i] != "-h") continue;
    const std::string group =
        i + 1 < tokens.size() && !tokens[i + 1].starts_with("-") ? tokens[i + 1] : "";
    const auto groups = registry.groups();
    if (!group.empty() && std::none_of(groups.begin(), groups.end(),
                                       [&](const FlagGroup& g) { return g.name == group; })) {
      std::string names;
      for (const auto& g : groups) names += (names.empty() ? "" : ", ") + std::string(g.name);
      throw UsageError("--help " + group + ": no such flag group; vime " + registry.command() +
                       " has " + names);
    }
    return std::string(usage) + flags_help(group, registry);
  }
  return std::nullopt;
}

}  // namespace vime::core
