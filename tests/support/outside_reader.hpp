// An HF directory as a reader that shares no code with vime sees it: the logits that
// tools/parity/torch_logits.py (a plain PyTorch port of HF's modeling code, its own safetensors
// parser) computes under Debian's python3-torch.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace vime::test {

// Empty when /usr/bin/python3 can import torch; else why the outside reader cannot run here.
std::string outside_reader_missing();

// [total tokens, vocab_size] fp32 logits of `sequences` (packed in order) for `model_dir`. On a
// reader error the Catch2 case fails with the reader's message.
at::Tensor outside_reader_logits(const std::filesystem::path& model_dir,
                                 const std::vector<std::vector<int64_t>>& sequences);

}  // namespace vime::test
