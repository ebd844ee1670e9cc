#include "vime/reward/reward_options.hpp"

#include <algorithm>
#include <cctype>

namespace vime::reward {
namespace {

bool flag_set(const Args& args, std::string_view key) { return args.has(key) && args.is_set(key); }

std::string trim(std::string s) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

}  // namespace

RewardOptions RewardOptions::from(const Args& args) {
  RewardOptions o;
  if (flag_set(args, "rm_type")) o.rm_type = trim(args.get_string("rm_type"));
  if (flag_set(args, "custom_rm_path")) o.custom_rm_path = args.get_string("custom_rm_path");
  o.group_rm = flag_set(args, "group_rm") && args.get_bool("group_rm");
  if (flag_set(args, "reward_key")) o.reward_key = args.get_string("reward_key");
  return o;
}

}  // namespace vime::reward
