// Grading one sample through the real dispatch and rm_hub plugins, for the reward tests.
#pragma once

#include <string>

#include "vime/args.hpp"
#include "vime/json.hpp"
#include "vime/reward/reward_dispatch.hpp"

namespace vime::test {

inline Args reward_args(const std::string& rm_type) {
  Args args;
  args.set("rm_type", Json(rm_type), ArgSource::kCommandLine, "--rm-type");
  return args;
}

inline Json grade(const std::string& rm_type, const std::string& response, const Json& label,
                  const Json& metadata = Json::object()) {
  Args args = reward_args(rm_type);
  reward::RewardDispatcher dispatcher(args);
  Sample s;
  s.response = response;
  s.label = label;
  s.metadata = metadata;
  return dispatcher.reward(s);
}

}  // namespace vime::test
