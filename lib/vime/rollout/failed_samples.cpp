#include "vime/rollout/failed_samples.hpp"

#include <map>

#include "vime/error.hpp"

namespace vime::rollout {
namespace {

// A long error (an engine's log tail) is cut here: the line stays readable, the whole text is in
// the sample's metadata.
constexpr size_t kMaxErrorChars = 2000;

std::string metadata_text(const Sample& s, const char* key) {
  const Json* value = s.metadata.is_object() ? s.metadata.find(key) : nullptr;
  return value != nullptr && value->is_string() ? value->as_string() : "";
}

// "failed to generate" for the stage group_generator names ("generate", "sample_hook", "reward").
std::string stage_phrase(const std::string& stage) {
  if (stage == "generate") return "failed to generate";
  if (stage == "sample_hook") return "failed in a --rollout-sample-hook-path hook";
  if (stage == "reward") return "failed in the reward function";
  return stage.empty() ? "failed" : "failed (" + stage + ")";
}

}  // namespace

std::optional<std::string> describe_failed_samples(const std::vector<Sample>& samples) {
  std::map<std::string, size_t> by_stage;
  size_t failed = 0;
  const Sample* first = nullptr;
  for (const Sample& s : samples) {
    if (s.status != SampleStatus::kFailed) continue;
    ++failed;
    ++by_stage[metadata_text(s, "error_cat")];
    if (first == nullptr) first = &s;
  }
  if (failed == 0) return std::nullopt;
  std::string line = std::to_string(failed) + " of " + std::to_string(samples.size()) + " samples ";
  if (by_stage.size() == 1) {
    line += stage_phrase(by_stage.begin()->first);
  } else {
    line += "failed (";
    bool more = false;
    for (const auto& [stage, n] : by_stage) {
      line += (more ? ", " : "") + (stage.empty() ? std::string("unknown") : stage) + " " +
              std::to_string(n);
      more = true;
    }
    line += ")";
  }
  std::string error = metadata_text(*first, "error");
  if (error.size() > kMaxErrorChars) error = error.substr(0, kMaxErrorChars) + " ...";
  const std::string stage = metadata_text(*first, "error_cat");
  line += "; first error";
  if (by_stage.size() > 1 && !stage.empty()) line += " (" + stage + ")";
  line += ": " + (error.empty() ? std::string("(no message)") : error);
  return line;
}

void stop_on_failed_samples(int64_t rollout_id, const std::vector<Sample>& samples) {
  if (auto line = describe_failed_samples(samples))
    throw Error("rollout " + std::to_string(rollout_id) + ": " + *line);
}

}  // namespace vime::rollout
