// Models in and out of directories: an HF directory (config.json + safetensors) or a vime
// checkpoint (see checkpoint.hpp) is accepted wherever a model is loaded.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>

#include "vime/model/model.hpp"

namespace vime::ckpt {

bool is_hf_dir(const std::filesystem::path& dir);
// An HF directory -> Model in `dtype` on `device`.
std::unique_ptr<Model> load_hf_model(const std::filesystem::path& dir, at::ScalarType dtype,
                                     const at::Device& device);
// Model -> HF directory (config.json + safetensors, vocabulary cut to `vocab_size` or the
// config's), in `dtype` (Undefined: the model's own). Atomic per file.
void save_hf_model(const Model& model, const std::filesystem::path& dir, int64_t vocab_size = 0,
                   at::ScalarType dtype = at::ScalarType::Undefined);

}  // namespace vime::ckpt
