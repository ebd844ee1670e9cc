// Reward plugins the reward dispatch tests load: one per-sample, one per-group.
#include <algorithm>
#include <vime/hooks.hpp>

// 1 when the response ends with the label text.
vime::Json ends_with_label(const vime::Args& /*args*/, const vime::Sample& sample) {
  const std::string label =
      sample.label.is_string() ? sample.label.as_string() : sample.label.dump();
  return sample.response.ends_with(label) ? 1 : 0;
}
VIME_REWARD_PLUGIN(ends_with_label)

// Ranks the responses of a group by length: the longest gets group.size() - 1, the shortest 0, and
// the reward is an object so --reward-key has something to read.
std::vector<vime::Json> length_rank(const vime::Args& /*args*/,
                                    const std::vector<vime::Sample>& group) {
  std::vector<vime::Json> out;
  for (const auto& s : group) {
    int rank = 0;
    for (const auto& other : group) rank += other.response.size() < s.response.size() ? 1 : 0;
    vime::Json r = vime::Json::object();
    r["rank"] = rank;
    r["group_size"] = static_cast<int64_t>(group.size());
    out.push_back(r);
  }
  return out;
}
VIME_GROUP_REWARD_PLUGIN(length_rank)

// Always fails, to check that one failing line does not stop the others.
vime::Json fail_on_marker(const vime::Args& /*args*/, const vime::Sample& sample) {
  if (sample.response.find("FAIL") != std::string::npos) throw vime::Error("marker found");
  return 0.5;
}
VIME_REWARD_PLUGIN(fail_on_marker)
