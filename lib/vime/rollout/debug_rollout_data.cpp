#include "vime/rollout/debug_rollout_data.hpp"

#include <algorithm>

#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::rollout {

std::filesystem::path debug_rollout_data_path(const std::string& path_template,
                                              const std::string& rollout_id) {
  std::string path = path_template;
  const std::string key = "{rollout_id}";
  for (size_t at = path.find(key); at != std::string::npos; at = path.find(key, at))
    path.replace(at, key.size(), rollout_id), at += rollout_id.size();
  return path;
}

void save_debug_rollout_data(const std::filesystem::path& path, int64_t rollout_id,
                             const std::vector<Sample>& samples) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  Json doc = Json::object();
  doc["rollout_id"] = rollout_id;
  Json list = Json::array();
  for (const Sample& s : samples) list.push_back(s.to_json());
  doc["samples"] = std::move(list);
  write_text_file_atomic(path, doc.dump());
}

std::vector<Sample> load_debug_rollout_data(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw Error("--load-debug-rollout-data: " + path.string() + " does not exist");
  const Json doc = Json::parse(read_text_file(path), path.string());
  const Json* list = doc.find("samples");
  if (!list || !list->is_array())
    throw Error("--load-debug-rollout-data: " + path.string() + " has no \"samples\" list");
  std::vector<Sample> samples;
  for (const Json& s : list->as_array()) samples.push_back(Sample::from_json(s));
  return samples;
}

std::vector<Sample> subsample_debug_rollout_data(std::vector<Sample> samples, double ratio) {
  const auto n = static_cast<int64_t>(samples.size());
  const auto rough = static_cast<int64_t>(static_cast<double>(n) * ratio);
  const int64_t head = std::min(rough / 2, n);
  // Python's -rough // 2 floors: -(rough + 1) / 2 from the end; -0 is the start.
  const int64_t tail_start = rough == 0 ? 0 : std::max<int64_t>(n - (rough + 1) / 2, 0);
  std::vector<Sample> out(samples.begin(), samples.begin() + head);
  out.insert(out.end(), samples.begin() + tail_start, samples.end());
  return out;
}

}  // namespace vime::rollout
