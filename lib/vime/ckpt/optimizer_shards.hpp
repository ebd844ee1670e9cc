// The distributed optimizer's part of a checkpoint: iter_N/optimizer/ holds one file per rank,
// rank_RRRR_of_WWWW.safetensors, with the flat pieces of optimizer state that rank held
// ("exp_avg.<param>", "exp_avg_sq.<param>", "master.<param>": elements [offset, offset + numel)
// of the flattened parameter) and its layout in the file's metadata (key "vime_layout":
// {"rank", "world_size", "parameters": {name: {"shape", "offset", "numel"}}}), plus shards.json
// ({"world_size"}) from rank 0. A checkpoint written at one data-parallel size loads at any
// other: each rank reassembles the ranges it owns now from the pieces that cover them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "vime/ckpt/safetensors.hpp"
#include "vime/train/optimizer.hpp"

namespace vime::ckpt {

std::filesystem::path optimizer_shards_dir(const std::filesystem::path& iter_dir);
std::string optimizer_shard_file(int rank, int world_size);  // "rank_0001_of_0004.safetensors"

// This rank's shard file (every rank), and shards.json (rank 0), under iter_dir/optimizer/.
void write_optimizer_shard(const std::filesystem::path& iter_dir, const Optimizer& optimizer);
void write_optimizer_shards_index(const std::filesystem::path& iter_dir, int world_size);

// Every rank's shard of a checkpoint, opened (memory-mapped) and indexed by parameter.
class OptimizerShards {
 public:
  // Throws vime::Error naming the file on a missing, truncated or inconsistent shard.
  explicit OptimizerShards(const std::filesystem::path& iter_dir);
  int world_size() const { return static_cast<int>(files_.size()); }
  // A StateReader for Optimizer::load_state.
  at::Tensor read(const std::string& key, at::IntArrayRef shape, int64_t offset,
                  int64_t numel) const;

 private:
  struct Piece {
    size_t file = 0;
    int64_t offset = 0, numel = 0;
  };
  struct Parameter {
    std::vector<int64_t> shape;
    std::vector<Piece> pieces;
  };
  std::filesystem::path dir_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, Parameter> parameters_;
};

}  // namespace vime::ckpt
