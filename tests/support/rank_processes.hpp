// Runs a worker binary as `world` real ranks on 127.0.0.1 (one process each, a free port for
// their rendezvous), for the multi-process tests of [dist_optim] and [dist_tp].
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace vime::test {

// Starts `binary` --rank R --world W --port P --out DIR/TAG_rankR.safetensors EXTRA... for every
// rank; fails the test (never hangs) when a rank fails or runs over 90 s, showing its log.
// Returns each rank's output file.
std::vector<std::filesystem::path> run_ranks(const std::string& binary,
                                             const std::filesystem::path& dir,
                                             const std::string& tag, int world,
                                             std::vector<std::string> extra);

// Every tensor of a safetensors file, by name.
std::map<std::string, at::Tensor> read_tensors(const std::filesystem::path& path);

}  // namespace vime::test
