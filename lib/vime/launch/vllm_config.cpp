#include "vime/launch/vllm_config.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "vime/core/yaml_json.hpp"
#include "vime/error.hpp"

namespace vime::launch {
namespace {

// vLLM flags the launcher sets per engine; an override may not change them.
constexpr const char* kOwnedFlags[] = {"--host", "--port",  "--tensor-parallel-size",
                                       "--seed", "--model", "--served-model-name"};

class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError("--vllm-config " + file_ + ": " + where + ": " + what);
  }
  void keys(const Json& node, const std::string& where, std::initializer_list<const char*> known) {
    if (!node.is_object()) fail(where, "expected a mapping, got " + std::string(node.type_name()));
    for (const auto& [key, value] : node.as_object()) {
      if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) ==
          known.end()) {
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        fail(where, "unknown key '" + key + "' (known: " + list + ")");
      }
    }
  }
  int positive_int(const Json& v, const std::string& where) const {
    if (!v.is_number() || v.as_double() != std::floor(v.as_double()) || v.as_double() < 1)
      fail(where, "expected a positive integer, got " + v.dump());
    return static_cast<int>(v.as_int());
  }
  std::string string(const Json& v, const std::string& where) const {
    if (!v.is_string() || v.as_string().empty()) fail(where, "expected a non-empty string");
    return v.as_string();
  }

 private:
  std::string file_;
};

}  // namespace

bool override_to_flag(const std::string& key, const Json& value, std::string* flag,
                      std::vector<std::string>* values) {
  std::string name = key;
  while (name.starts_with("-")) name.erase(0, 1);
  std::replace(name.begin(), name.end(), '_', '-');
  *flag = "--" + name;
  values->clear();
  auto scalar = [](const Json& v) {
    if (v.is_string()) return v.as_string();
    if (v.is_bool()) return std::string(v.as_bool() ? "true" : "false");
    return v.dump();
  };
  switch (value.type()) {
    case Json::Type::kNull:
      return false;
    case Json::Type::kBool:
      return value.as_bool();
    case Json::Type::kArray:
      for (const auto& v : value.as_array()) values->push_back(scalar(v));
      return true;
    case Json::Type::kObject:
      values->push_back(value.dump());
      return true;
    default:
      values->push_back(scalar(value));
      return true;
  }
}

std::vector<VllmModel> parse_vllm_config(const Json& doc, const std::string& file,
                                         const std::string& hf_checkpoint,
                                         int default_gpus_per_engine) {
  Checker check(file);
  check.keys(doc, "top level", {"vllm"});
  const Json* models = doc.find("vllm");
  if (models == nullptr || !models->is_array() || models->size() == 0)
    check.fail("vllm", "expected a non-empty list of models");
  std::vector<VllmModel> out;
  std::set<std::string> names;
  for (size_t m = 0; m < models->size(); ++m) {
    const Json& node = models->at(m);
    const std::string where = "vllm[" + std::to_string(m) + "]";
    check.keys(node, where,
               {"name", "model_path", "update_weights", "num_gpus_per_engine", "server_groups",
                "engine_groups"});
    VllmModel model;
    if (!node.contains("name")) check.fail(where, "missing key 'name'");
    model.name = check.string(node.at("name"), where + ".name");
    if (!names.insert(model.name).second)
      check.fail(where + ".name", "model '" + model.name + "' is listed twice");
    model.model_path = node.contains("model_path")
                           ? check.string(node.at("model_path"), where + ".model_path")
                           : hf_checkpoint;
    if (model.model_path.empty())
      check.fail(where, "no model_path and no --hf-checkpoint to default to");
    model.update_weights = model.model_path == hf_checkpoint;
    if (const Json* u = node.find("update_weights"); u != nullptr && !u->is_null()) {
      if (!u->is_bool()) check.fail(where + ".update_weights", "expected true or false");
      model.update_weights = u->as_bool();
    }
    const int model_engine_gpus =
        node.contains("num_gpus_per_engine")
            ? check.positive_int(node.at("num_gpus_per_engine"), where + ".num_gpus_per_engine")
            : default_gpus_per_engine;
    if (node.contains("server_groups") && node.contains("engine_groups"))
      check.fail(where, "give server_groups or engine_groups (an alias), not both");
    const char* groups_key = node.contains("engine_groups") ? "engine_groups" : "server_groups";
    const Json* groups = node.find(groups_key);
    if (groups == nullptr || !groups->is_array() || groups->size() == 0)
      check.fail(where + "." + groups_key, "expected a non-empty list of groups");
    for (size_t g = 0; g < groups->size(); ++g) {
      const Json& gnode = groups->at(g);
      const std::string gwhere = where + "." + groups_key + "[" + std::to_string(g) + "]";
      check.keys(gnode, gwhere, {"worker_type", "num_gpus", "num_gpus_per_engine", "overrides"});
      VllmServerGroup group;
      group.worker_type = gnode.contains("worker_type")
                              ? check.string(gnode.at("worker_type"), gwhere + ".worker_type")
                              : "regular";
      const std::string& type = group.worker_type;
      if (type == "prefill" || type == "decode" || type == "encoder") {
        check.fail(gwhere + ".worker_type",
                   type + " engines (disaggregated serving) are not supported yet; use regular");
      }
      if (type != "regular" && type != "placeholder") {
        check.fail(gwhere + ".worker_type",
                   "'" + type + "' is none of regular, prefill, decode, placeholder, encoder");
      }
      if (!gnode.contains("num_gpus")) check.fail(gwhere, "missing key 'num_gpus'");
      group.num_gpus = check.positive_int(gnode.at("num_gpus"), gwhere + ".num_gpus");
      group.num_gpus_per_engine =
          gnode.contains("num_gpus_per_engine")
              ? check.positive_int(gnode.at("num_gpus_per_engine"), gwhere + ".num_gpus_per_engine")
              : model_engine_gpus;
      if (type == "regular" && group.num_gpus % group.num_gpus_per_engine != 0) {
        check.fail(gwhere + ".num_gpus",
                   std::to_string(group.num_gpus) + " is not a multiple of the engine size " +
                       std::to_string(group.num_gpus_per_engine) + " (num_gpus_per_engine)");
      }
      if (const Json* o = gnode.find("overrides"); o != nullptr && !o->is_null()) {
        if (!o->is_object()) check.fail(gwhere + ".overrides", "expected a mapping of vLLM flags");
        for (const auto& [key, value] : o->as_object()) {
          std::string flag;
          std::vector<std::string> values;
          override_to_flag(key, value, &flag, &values);
          for (const char* owned : kOwnedFlags) {
            if (flag == owned) {
              check.fail(gwhere + ".overrides." + key,
                         "vime sets " + flag + " itself (engine size: num_gpus_per_engine)");
            }
          }
          group.overrides.emplace_back(flag, value);
        }
      }
      model.groups.push_back(std::move(group));
    }
    out.push_back(std::move(model));
  }
  return out;
}

std::vector<VllmModel> load_vllm_config(const std::filesystem::path& file,
                                        const std::string& hf_checkpoint,
                                        int default_gpus_per_engine) {
  const Json doc = core::load_yaml_file(file, "--vllm-config");
  return parse_vllm_config(doc, file.string(), hf_checkpoint, default_gpus_per_engine);
}

}  // namespace vime::launch
