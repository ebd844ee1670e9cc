// LoRA adapters in PEFT's files (peft utils/save_and_load.py, PeftModel.save_pretrained): a
// directory holding adapter_config.json (peft_type LORA, task_type CAUSAL_LM, r, lora_alpha,
// lora_dropout, target_modules, base_model_name_or_path) and adapter_model.safetensors, whose
// tensors are named "base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight" ([r, in])
// and "...lora_B.weight" ([out, r]), whole. A training checkpoint holds one in iter_N/adapter.
#pragma once

#include <filesystem>
#include <string>

#include "vime/model/lora.hpp"
#include "vime/model/model.hpp"

namespace vime::ckpt {

bool is_peft_adapter_dir(const std::filesystem::path& dir);

// `tensors`: Model::lora_tensors() (whole, vime's names).
void write_peft_adapter(const std::filesystem::path& dir, const LoraConfig& config,
                        const NamedTensorList& tensors, const std::string& base_model);

struct PeftAdapter {
  LoraConfig config;
  NamedTensorList tensors;  // vime's names (Model::lora_parameters())
  std::string base_model;   // base_model_name_or_path, maybe empty
};
// Throws vime::Error naming the file on what vime cannot apply: another peft_type, DoRA, bias
// training, modules_to_save, per-module rank or alpha patterns, layer subsets, a target outside
// the decoder's linears.
PeftAdapter read_peft_adapter(const std::filesystem::path& dir);

// The adapter of `dir` on `model`: adds the adapters when the model has none, else checks that
// rank and targets agree; then loads the tensors. vime::Error naming the dir otherwise.
void apply_peft_adapter(const std::filesystem::path& dir, Model& model);

// The adapter of `dir` merged into a model without adapters: each adapted weight += scale * B @ A
// (in fp32), on this rank's slice.
void merge_peft_adapter(const std::filesystem::path& dir, Model& model);

}  // namespace vime::ckpt
