#include "vime/ckpt/optimizer_shards.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>

#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::ckpt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kIndex = "shards.json";
constexpr const char* kLayoutKey = "vime_layout";

std::string shape_text(const std::vector<int64_t>& shape) {
  return c10::str(at::IntArrayRef(shape));
}

}  // namespace

fs::path optimizer_shards_dir(const fs::path& iter_dir) { return iter_dir / "optimizer"; }

std::string optimizer_shard_file(int rank, int world_size) {
  char name[64];
  std::snprintf(name, sizeof(name), "rank_%04d_of_%04d.safetensors", rank, world_size);
  return name;
}

void write_optimizer_shard(const fs::path& iter_dir, const Optimizer& optimizer) {
  NamedTensorList tensors;
  Json parameters = Json::object();
  for (const auto& seg : optimizer.state_segments()) {
    for (const auto& [kind, values] : seg.values)
      tensors.emplace_back(kind + "." + seg.name, values);
    Json p = Json::object();
    p["shape"] = Json(seg.shape);
    p["offset"] = seg.offset;
    p["numel"] = seg.numel;
    parameters[seg.name] = std::move(p);
  }
  Json layout = Json::object();
  layout["rank"] = optimizer.rank();
  layout["world_size"] = optimizer.world_size();
  layout["parameters"] = std::move(parameters);
  fs::create_directories(optimizer_shards_dir(iter_dir));
  write_safetensors(optimizer_shards_dir(iter_dir) /
                        optimizer_shard_file(optimizer.rank(), optimizer.world_size()),
                    tensors, {{kLayoutKey, layout.dump()}});
}

void write_optimizer_shards_index(const fs::path& iter_dir, int world_size) {
  Json index = Json::object();
  index["world_size"] = world_size;
  fs::create_directories(optimizer_shards_dir(iter_dir));
  write_text_file_atomic(optimizer_shards_dir(iter_dir) / kIndex, index.dump(2) + "\n");
}

OptimizerShards::OptimizerShards(const fs::path& iter_dir) : dir_(optimizer_shards_dir(iter_dir)) {
  const fs::path index_path = dir_ / kIndex;
  const Json index = Json::parse(read_text_file(index_path), index_path.string());
  const int64_t world_size = index.at("world_size").as_int();
  if (world_size < 1 || world_size > 1 << 20) {
    throw Error(index_path.string() + ": world_size " + std::to_string(world_size) +
                " is not a number of ranks");
  }
  for (int r = 0; r < world_size; ++r) {
    const fs::path path = dir_ / optimizer_shard_file(r, static_cast<int>(world_size));
    if (!fs::exists(path)) {
      throw Error(path.string() + ": optimizer shard of rank " + std::to_string(r) + " of " +
                  std::to_string(world_size) +
                  " is missing (an incomplete copy of the checkpoint?); resume with "
                  "--no-load-optim to start the optimizer afresh");
    }
    files_.emplace_back(path);
    const auto& metadata = files_.back().metadata();
    auto it = metadata.find(kLayoutKey);
    if (it == metadata.end()) {
      throw Error(path.string() + ": no \"" + kLayoutKey +
                  "\" in its metadata: not a vime optimizer shard");
    }
    const Json layout = Json::parse(it->second, path.string() + " (" + kLayoutKey + ")");
    if (layout.at("rank").as_int() != r || layout.at("world_size").as_int() != world_size) {
      throw Error(path.string() + ": holds rank " + std::to_string(layout.at("rank").as_int()) +
                  " of " + std::to_string(layout.at("world_size").as_int()) +
                  ", not what its name says");
    }
    for (const auto& [name, p] : layout.at("parameters").as_object()) {
      std::vector<int64_t> shape;
      for (const auto& d : p.at("shape").as_array()) shape.push_back(d.as_int());
      auto& param = parameters_[name];
      if (param.pieces.empty()) {
        param.shape = shape;
      } else if (param.shape != shape) {
        throw Error(path.string() + ": parameter " + name + " has shape " + shape_text(shape) +
                    " here and " + shape_text(param.shape) + " in another shard");
      }
      param.pieces.push_back({files_.size() - 1, p.at("offset").as_int(), p.at("numel").as_int()});
    }
  }
}

at::Tensor OptimizerShards::read(const std::string& key, at::IntArrayRef shape, int64_t offset,
                                 int64_t numel) const {
  const auto dot = key.find('.');
  const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
  auto it = parameters_.find(name);
  if (it == parameters_.end()) {
    throw Error(dir_.string() + ": optimizer state \"" + key +
                "\" is missing (load with --no-load-optim to start the optimizer afresh)");
  }
  const auto& param = it->second;
  if (at::IntArrayRef(param.shape) != shape) {
    throw Error(dir_.string() + ": optimizer state \"" + key + "\" has shape " +
                shape_text(param.shape) + ", expected " + c10::str(shape));
  }
  auto out = at::empty({numel}, at::kFloat);
  int64_t covered = 0;
  for (const auto& piece : param.pieces) {
    const int64_t begin = std::max(offset, piece.offset);
    const int64_t end = std::min(offset + numel, piece.offset + piece.numel);
    if (begin >= end) continue;
    const auto& file = files_[piece.file];
    if (!file.contains(key)) {
      throw Error(file.path().string() + ": optimizer state \"" + key +
                  "\" is missing (load with --no-load-optim to start the optimizer afresh)");
    }
    auto values = file.get(key);
    if (values.dim() != 1 || values.numel() != piece.numel) {
      throw Error(file.path().string() + ": \"" + key + "\" has " + std::to_string(values.numel()) +
                  " elements, its layout says " + std::to_string(piece.numel));
    }
    out.narrow(0, begin - offset, end - begin)
        .copy_(values.narrow(0, begin - piece.offset, end - begin));
    covered += end - begin;
  }
  if (covered != numel) {
    throw Error(dir_.string() + ": the optimizer shards hold " + std::to_string(covered) + " of " +
                std::to_string(numel) + " elements of \"" + key +
                "\" asked for (overlapping or missing pieces)");
  }
  return out;
}

}  // namespace vime::ckpt
