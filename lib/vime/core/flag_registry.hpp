// The flags of one command (`vime train` and the subcommands that share its flags, or another
// subcommand's own), indexed by name, alias and dest.
#pragma once

#include <deque>
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
  // `command` ("train") is what errors name (`vime train --help lists every flag`).
  FlagRegistry(std::string_view command, std::vector<FlagGroup> groups);
  // A subcommand's own `groups` on top of `base`'s (e.g. `vime serve`: vLLM's flags over train's):
  // a name declared in `groups` replaces base's flag of that name, which leaves the registry.
  // `base` must outlive this registry.
  FlagRegistry(std::string_view command, std::vector<FlagGroup> groups, const FlagRegistry& base);
  FlagRegistry(const FlagRegistry&) = delete;
  FlagRegistry& operator=(const FlagRegistry&) = delete;

  const std::string& command() const { return command_; }
  std::span<const FlagGroup> groups() const { return groups_; }
  // The positional specs (name without '-'), in the order bare tokens fill them.
  std::span<const FlagSpec* const> positionals() const { return positionals_; }
  // By "--name", an alias, or "--no-name" of a kBoolOptional flag (sets *negated); never a
  // positional.
  const FlagSpec* find(std::string_view name, bool* negated = nullptr) const;
  const FlagSpec* find_by_dest(std::string_view dest) const;
  const FlagGroup* group_of(const FlagSpec& spec) const;
  // The known spelling closest to `name` (for "did you mean"), or empty when nothing is close.
  std::string nearest(std::string_view name) const;

 private:
  void index();

  std::string command_;
  std::vector<FlagGroup> groups_;
  std::deque<std::vector<FlagSpec>> kept_;  // base groups less the flags a subcommand replaced
  std::vector<const FlagSpec*> positionals_;
  std::map<std::string, const FlagSpec*, std::less<>> by_name_;
  std::map<std::string, const FlagSpec*, std::less<>> by_dest_;
  std::map<const FlagSpec*, const FlagGroup*> group_;
};

std::string dest_of(const FlagSpec& spec);
// A spec named without a leading '-' ("MODE"): filled by a bare token.
bool is_positional(const FlagSpec& spec);
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
