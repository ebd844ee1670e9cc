#include "vime/ckpt/model_io.hpp"

#include <ATen/ATen.h>

#include "vime/ckpt/safetensors.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/model/hf_layout.hpp"
#include "vime/model/moe.hpp"

namespace vime::ckpt {

bool is_hf_dir(const std::filesystem::path& dir) {
  return std::filesystem::exists(dir / "config.json") && has_safetensors(dir);
}

std::unique_ptr<Model> load_hf_model(const std::filesystem::path& dir, at::ScalarType dtype,
                                     const at::Device& device) {
  if (!std::filesystem::is_directory(dir)) {
    throw Error(dir.string() + ": not a directory (expected an HF model dir or a vime checkpoint)");
  }
  auto config = ModelConfig::from_hf_dir(dir);
  auto model = std::make_unique<Model>(config, dtype, device);
  model->load_tensors(read_safetensors_dir(dir), dir.string());
  return model;
}

void save_hf_model(const Model& model, const std::filesystem::path& dir, int64_t vocab_size,
                   at::ScalarType dtype) {
  std::filesystem::create_directories(dir);
  if (dtype == at::ScalarType::Undefined) dtype = model.dtype();
  NamedTensorList tensors;
  // With LoRA adapters: the merged weights (what the adapted model computes).
  for (auto& [name, t] :
       model.has_lora() ? model.merged_hf_tensors(vocab_size) : model.hf_tensors(vocab_size))
    tensors.emplace_back(name, is_expert_bias(name) ? t : t.to(dtype));  // the bias stays fp32
  write_safetensors_dir(dir, hub_layout(std::move(tensors), model.config()));
  auto config = model.config();
  if (vocab_size > 0) config.vocab_size = vocab_size;
  std::string dtype_name = dtype == at::kBFloat16 ? "bfloat16"
                           : dtype == at::kHalf   ? "float16"
                                                  : "float32";
  write_text_file_atomic(dir / "config.json", config.to_hf_json(dtype_name).dump(2) + "\n");
}

}  // namespace vime::ckpt
