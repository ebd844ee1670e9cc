#include "vime/serve/disk_weight_receiver.hpp"

#include <ATen/ATen.h>

#include <map>

#include "vime/ckpt/safetensors.hpp"
#include "vime/error.hpp"
#include "vime/model/hf_layout.hpp"
#include "vime/model/model.hpp"
#include "vime/model/moe.hpp"

namespace vime::serve {
namespace {

// Model::load_tensors' rule: vocabulary tensors may hold fewer rows than the padded parameter.
bool fits(const std::string& name, const at::Tensor& src, const at::Tensor& param,
          int64_t vocab_size) {
  const bool is_vocab = name == "model.embed_tokens.weight" || name == "lm_head.weight";
  if (is_vocab && src.dim() == 2 && param.dim() == 2 && src.size(1) == param.size(1) &&
      src.size(0) >= vocab_size && src.size(0) <= param.size(0)) {
    return true;
  }
  return src.sizes() == param.sizes();
}

}  // namespace

void load_hf_weights(const std::filesystem::path& dir, Model& model) {
  const std::string where = "weights from " + dir.string();
  if (!std::filesystem::is_directory(dir)) {
    throw Error(where + ": not a directory (pass an HF directory with *.safetensors files)");
  }
  if (!ckpt::has_safetensors(dir)) {
    throw Error(where + ": no *.safetensors files there (pass an HF safetensors directory)");
  }
  // validates headers; GLM-4's fused gate_up_proj as vime's two tensors
  const ckpt::NamedTensors tensors = split_fused_gate_up(ckpt::read_safetensors_dir(dir));
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : tensors) by_name[name] = &t;
  for (const auto& [name, param] : model.named_parameters()) {
    auto it = by_name.find(name);
    if (it == by_name.end() && !per_expert_name(name, 0).empty()) {
      // Stacked experts from the Hub's one tensor per expert (or transformers 5's fused
      // gate_up_proj, whose shape load_tensors checks).
      if (by_name.count(name.substr(0, name.rfind('.') + 1) + "gate_up_proj") > 0) continue;
      for (int64_t j = 0; j < param.size(0); ++j) {
        const std::string expert = per_expert_name(name, j);
        auto e = by_name.find(expert);
        if (e == by_name.end()) {
          throw Error(where + ": tensor \"" + expert + "\" is missing; the old weights are kept");
        }
        if (e->second->sizes() != param[j].sizes() || !e->second->is_floating_point()) {
          throw Error(where + ": tensor \"" + expert + "\" has shape " +
                      c10::str(e->second->sizes()) + ", the model needs " +
                      c10::str(param[j].sizes()) + "; the old weights are kept");
        }
      }
      continue;
    }
    if (it == by_name.end()) {
      throw Error(where + ": tensor \"" + name + "\" is missing; the old weights are kept");
    }
    if (!fits(name, *it->second, param, model.config().vocab_size)) {
      throw Error(where + ": tensor \"" + name + "\" has shape " + c10::str(it->second->sizes()) +
                  ", the model needs " + c10::str(param.sizes()) + "; the old weights are kept");
    }
    if (!it->second->is_floating_point()) {
      throw Error(where + ": tensor \"" + name +
                  "\" is not floating point; the old weights are kept");
    }
  }
  // Every tensor checked: copying in cannot fail half-way.
  model.load_tensors(tensors, where);
}

void DiskWeightReceiver::init(const Json& init_info) {
  if (!init_info.is_object()) throw Error("init_info: the disk backend takes an object ({})");
}

void DiskWeightReceiver::update(const Json& update_info, Model& model) {
  const Json* path = update_info.is_object() ? update_info.find("path") : nullptr;
  if (!path || !path->is_string() || path->as_string().empty()) {
    throw Error("update_info.path: the disk backend needs {\"path\": \"/abs/hf_dir\"}");
  }
  load_hf_weights(path->as_string(), model);
}

}  // namespace vime::serve
