// The EOS ids an HF model directory declares: generation_config.json's eos_token_id (an id or a
// list, as Qwen3's [151645, 151643]), else config.json's. NativeEngineOptions::eos_token_ids.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace vime::engine {

// Empty when neither file names one. Throws vime::Error naming the file on malformed JSON.
std::vector<int32_t> eos_token_ids_from_hf_dir(const std::filesystem::path& dir);

}  // namespace vime::engine
