#include "vime/ckpt/peft_adapter.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <map>

#include "vime/ckpt/safetensors.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::ckpt {
namespace fs = std::filesystem;

namespace {

constexpr const char* kConfigFile = "adapter_config.json";
constexpr const char* kTensorFile = "adapter_model.safetensors";
constexpr const char* kPeftPrefix = "base_model.model.";

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

bool is_empty(const Json* j) {
  return j == nullptr || j->is_null() || ((j->is_array() || j->is_object()) && j->size() == 0) ||
         (j->is_bool() && !j->as_bool());
}

}  // namespace

bool is_peft_adapter_dir(const fs::path& dir) {
  return fs::exists(dir / kConfigFile) && fs::exists(dir / kTensorFile);
}

void write_peft_adapter(const fs::path& dir, const LoraConfig& config,
                        const NamedTensorList& tensors, const std::string& base_model) {
  fs::create_directories(dir);
  NamedTensorList named;
  for (const auto& [name, t] : tensors) named.emplace_back(kPeftPrefix + name, t.contiguous());
  write_safetensors(dir / kTensorFile, named, {{"format", "pt"}});
  Json c = Json::object();
  c["peft_type"] = "LORA";
  c["task_type"] = "CAUSAL_LM";
  c["r"] = config.rank;
  c["lora_alpha"] = config.alpha;
  c["lora_dropout"] = config.dropout;
  c["target_modules"] = config.target_modules;
  c["base_model_name_or_path"] = base_model;
  c["bias"] = "none";
  c["fan_in_fan_out"] = false;
  c["use_rslora"] = config.use_rslora;
  c["use_dora"] = false;
  c["inference_mode"] = true;
  c["init_lora_weights"] = true;
  c["modules_to_save"] = nullptr;
  c["layers_to_transform"] = nullptr;
  c["rank_pattern"] = Json::object();
  c["alpha_pattern"] = Json::object();
  write_text_file_atomic(dir / kConfigFile, c.dump(2) + "\n");
}

PeftAdapter read_peft_adapter(const fs::path& dir) {
  const fs::path config_path = dir / kConfigFile;
  const std::string where = config_path.string();
  if (!fs::exists(config_path)) throw Error(where + ": no such file (not a PEFT adapter dir)");
  const Json c = Json::parse(read_text_file(config_path), where);
  PeftAdapter out;
  const Json* type = c.find("peft_type");
  if (type == nullptr || !type->is_string() || type->as_string() != "LORA")
    throw Error(where + ": peft_type is not LORA (vime applies LoRA adapters only)");
  out.config.rank = c.at("r").as_int();
  out.config.alpha = c.find("lora_alpha") ? c.at("lora_alpha").as_double() : 8.0;
  if (const Json* d = c.find("lora_dropout"); d != nullptr && !d->is_null())
    out.config.dropout = d->as_double();
  if (const Json* r = c.find("use_rslora"); r != nullptr && r->is_bool())
    out.config.use_rslora = r->as_bool();
  if (out.config.rank <= 0) throw Error(where + ": r must be > 0");
  for (const char* unsupported : {"use_dora", "fan_in_fan_out", "modules_to_save",
                                  "layers_to_transform", "rank_pattern", "alpha_pattern"}) {
    if (!is_empty(c.find(unsupported)))
      throw Error(where + ": " + unsupported + " is set; vime applies plain LoRA on whole layers");
  }
  if (const Json* bias = c.find("bias");
      bias != nullptr && bias->is_string() && bias->as_string() != "none")
    throw Error(where + ": bias \"" + bias->as_string() + "\" trains biases; vime needs \"none\"");
  std::vector<std::string> targets;
  const Json& t = c.at("target_modules");
  if (t.is_string()) {
    if (t.as_string() != "all-linear")
      throw Error(where + ": target_modules \"" + t.as_string() +
                  "\" is a pattern; vime reads a list of module names or all-linear");
    targets.assign(kLoraModules.begin(), kLoraModules.end());
  } else {
    for (const auto& m : t.as_array()) targets.push_back(m.as_string());
  }
  for (const auto& m : targets) {
    if (std::find(kLoraModules.begin(), kLoraModules.end(), m) == kLoraModules.end())
      throw Error(where + ": target module \"" + m + "\" is not one of the decoder's linears (" +
                  join({kLoraModules.begin(), kLoraModules.end()}) + ")");
  }
  for (const char* m : kLoraModules)
    if (std::find(targets.begin(), targets.end(), m) != targets.end())
      out.config.target_modules.push_back(m);
  if (const Json* base = c.find("base_model_name_or_path"); base != nullptr && base->is_string())
    out.base_model = base->as_string();
  const fs::path tensor_path = dir / kTensorFile;
  SafetensorsFile file(tensor_path);
  const std::string prefix = kPeftPrefix;
  for (const auto& name : file.names()) {
    if (name.rfind(prefix, 0) != 0 || name.find(".lora_") == std::string::npos)
      throw Error(tensor_path.string() + ": tensor \"" + name +
                  "\" is not a LoRA A/B matrix under PEFT's names");
    // PEFT saved before 0.4 kept the adapter's name ("lora_A.default.weight"): drop it.
    std::string local = name.substr(prefix.size());
    for (const char* which : {".lora_A.", ".lora_B."}) {
      const auto at = local.find(which);
      if (at != std::string::npos && local.compare(at + 8, 7, "weight") != 0)
        local = local.substr(0, at + 8) + "weight";
    }
    out.tensors.emplace_back(local, file.get(name));
  }
  return out;
}

void apply_peft_adapter(const fs::path& dir, Model& model) {
  auto adapter = read_peft_adapter(dir);
  if (!model.has_lora()) {
    model.add_lora(adapter.config);
  } else {
    const auto& mine = model.lora_config();
    if (mine.rank != adapter.config.rank || mine.target_modules != adapter.config.target_modules ||
        mine.scale() != adapter.config.scale()) {
      throw Error(dir.string() + ": the adapter has r " + std::to_string(adapter.config.rank) +
                  " alpha " + std::to_string(adapter.config.alpha) + " on " +
                  join(adapter.config.target_modules) + "; this run has --lora-rank " +
                  std::to_string(mine.rank) + " --lora-alpha " + std::to_string(mine.alpha) +
                  " on " + join(mine.target_modules));
    }
  }
  model.load_lora_tensors(adapter.tensors, (dir / kTensorFile).string());
}

void merge_peft_adapter(const fs::path& dir, Model& model) {
  auto adapter = read_peft_adapter(dir);
  std::map<std::string, at::Tensor> by_name(adapter.tensors.begin(), adapter.tensors.end());
  const std::string where = (dir / kTensorFile).string();
  at::NoGradGuard no_grad;
  for (const auto& [name, a] : adapter.tensors) {
    const auto at = name.find(".lora_A.weight");
    if (at == std::string::npos) continue;
    const std::string stem = name.substr(0, at);
    auto b = by_name.find(stem + ".lora_B.weight");
    auto base = model.find_parameter(stem + ".weight");
    if (b == by_name.end() || !base)
      throw Error(where + ": \"" + name + "\" has no lora_B or no base weight in this model");
    auto delta = adapter.config.scale() * at::matmul(b->second.to(at::kFloat), a.to(at::kFloat));
    auto& [param, slice] = *base;
    const auto full = whole_shape(param, slice, model.tensor_parallel().size);
    if (delta.sizes() != at::IntArrayRef(full))
      throw Error(where + ": \"" + stem + "\": B @ A has shape " + c10::str(delta.sizes()) +
                  ", the base weight " + c10::str(at::IntArrayRef(full)));
    param.copy_(
        (param.to(at::kFloat) + slice.of(delta).to(param.device())).to(param.scalar_type()));
  }
}

}  // namespace vime::ckpt
