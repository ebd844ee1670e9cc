#include "vime/rollout/debug_rollout_data.hpp"

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

}  // namespace vime::rollout
