// A model as a complete HF directory: the weights (save_hf_model) plus the other files of the HF
// directory it came from (config.json's siblings: tokenizer, chat template, generation config).
// What `vime convert-hf --input-dir` writes, and what `vime train --save-hf` writes at each save.
#pragma once

#include <cstdint>
#include <filesystem>

#include "vime/model/model.hpp"

namespace vime::ckpt {

// Writes `out` through `out`.tmp and a rename, replacing what was there. Every regular file of
// `origin` that is no weight file is copied in (config.json included: it replaces the generated
// one, as the HF tools keep the original). Returns how many files came from `origin`.
int write_hf_directory(const Model& model, const std::filesystem::path& out,
                       const std::filesystem::path& origin, int64_t vocab_size = 0);

}  // namespace vime::ckpt
