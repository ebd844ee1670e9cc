#include "vime/engine/generation_config.hpp"

#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::engine {

std::vector<int32_t> eos_token_ids_from_hf_dir(const std::filesystem::path& dir) {
  for (const char* name : {"generation_config.json", "config.json"}) {
    const auto path = dir / name;
    if (!std::filesystem::exists(path)) continue;
    const Json config = Json::parse(read_text_file(path), path.string());
    const Json* eos = config.find("eos_token_id");
    if (eos == nullptr || eos->is_null()) continue;
    std::vector<int32_t> ids;
    if (eos->is_array()) {
      for (size_t i = 0; i < eos->size(); ++i)
        ids.push_back(static_cast<int32_t>(eos->at(i).as_int()));
    } else if (eos->is_number()) {
      ids.push_back(static_cast<int32_t>(eos->as_int()));
    } else {
      throw Error(path.string() + ": eos_token_id must be an id or a list of ids");
    }
    return ids;
  }
  return {};
}

}  // namespace vime::engine
