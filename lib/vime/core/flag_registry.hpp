// All flags of `vime train` (and the subcommands that share them), indexed by name, alias and dest.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vime/core/flag_spec.hpp"
#include "vime/json.hpp"

namespace vime::core {

class FlagRegistry {
 public:
  // The registry of every group in lib/vime/core/flags (built once; checked for duplicate names).
  static const FlagRegistry& instance();
  explicit FlagRegistry(std::vector<FlagGroup> groups);

  std::span<const FlagGroup> groups() const { return groups_; }
  // By "--name", an alias, or "--no-name" of a kBoolOptional flag (sets *negated).
  const FlagSpec* find(std::string_view name, bool* negated = nullptr) const;
  const FlagSpec* find_by_dest(std::string_view dest) const;
  const FlagGroup* group_of(const FlagSpec& spec) const;
  // The known spelling closest to `name` (for "did you mean"), or empty when nothing is close.
  std::string nearest(std::string_view name) const;

 private:
  std::vector<FlagGroup> groups_;
  std::map<std::string, const FlagSpec*, std::less<>> by_name_;
  std::map<std::string, const FlagSpec*, std::less<>> by_dest_;
  std::map<const FlagSpec*, const FlagGroup*> group_;
};

std::string dest_of(const FlagSpec& spec);
// The default as a value: null for None, false/true for switches, typed otherwise.
Json default_value(const FlagSpec& spec);
// Converts the tokens given to a flag into its value; throws UsageError naming the flag.
Json convert_tokens(const FlagSpec& spec, std::span<const std::string> tokens);
// True for flags that take no value token (switches).
bool is_switch(const FlagSpec& spec);
bool is_list(const FlagSpec& spec);
// Value as a command line would show it: `2`, `a b`, `true`.
std::string display_value(const Json& value);

}  // namespace vime::core
