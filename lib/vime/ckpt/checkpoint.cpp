#include "vime/ckpt/checkpoint.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <unistd.h>

#include <cstdio>
#include <regex>

#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"

namespace vime::ckpt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTracker = "latest_checkpointed_iteration.txt";

std::string optimizer_file(int64_t rank) {
  char name[64];
  std::snprintf(name, sizeof(name), "optimizer_rank_%05lld.safetensors",
                static_cast<long long>(rank));
  return name;
}

Json read_json(const fs::path& path) { return Json::parse(read_text_file(path), path.string()); }

int64_t parse_iteration(const std::string& text, const fs::path& where) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (v < 0) throw std::invalid_argument("negative");
    return v;
  } catch (const std::exception&) {
    throw Error(where.string() + ": expected an iteration number, found \"" + text + "\"");
  }
}

}  // namespace

std::string iteration_dir_name(int64_t iteration) {
  char name[32];
  std::snprintf(name, sizeof(name), "iter_%07lld", static_cast<long long>(iteration));
  return name;
}

void save_checkpoint(const fs::path& save_dir, const Model& model, const Optimizer* optimizer,
                     const TrainState& state, const SaveOptions& options) {
  fs::create_directories(save_dir);
  const fs::path final_dir = save_dir / iteration_dir_name(state.iteration);
  const fs::path temp_dir =
      save_dir / (iteration_dir_name(state.iteration) + ".tmp." + std::to_string(::getpid()));
  fs::remove_all(temp_dir);
  fs::create_directories(temp_dir / "model");
  try {
    NamedTensorList tensors;
    for (const auto& [name, t] : model.named_parameters()) tensors.emplace_back(name, t.detach());
    write_safetensors_dir(temp_dir / "model", tensors);
    Json config = model.config().to_hf_json(model.dtype() == at::kBFloat16 ? "bfloat16"
                                            : model.dtype() == at::kHalf   ? "float16"
                                                                           : "float32");
    config["vime_padded_vocab_size"] = model.config().padded_vocab_size;
    write_text_file_atomic(temp_dir / "model" / "config.json", config.dump(2) + "\n");
    if (optimizer != nullptr && options.save_optimizer) {
      write_safetensors(temp_dir / optimizer_file(options.rank), optimizer->state_tensors());
    }
    if (options.save_rng) {
      auto rng = at::detail::getDefaultCPUGenerator().get_state();
      write_safetensors(temp_dir / "rng.safetensors", {{"cpu", rng}});
    }
    Json s = Json::object();
    s["iteration"] = state.iteration;
    s["optimizer_steps"] = optimizer != nullptr ? optimizer->num_steps() : state.optimizer_steps;
    s["lr_scheduler_steps"] = state.lr_scheduler_steps;
    s["has_optimizer"] = optimizer != nullptr && options.save_optimizer;
    s["has_rng"] = options.save_rng;
    s["data_source"] = state.data_source;
    s["args"] = state.args;
    write_text_file_atomic(temp_dir / "state.json", s.dump(2) + "\n");
  } catch (...) {
    fs::remove_all(temp_dir);
    throw;
  }
  // Replace an older copy of the same iteration only once the new one is complete.
  if (fs::exists(final_dir)) {
    const fs::path old_dir = final_dir.string() + ".old." + std::to_string(::getpid());
    fs::rename(final_dir, old_dir);
    fs::rename(temp_dir, final_dir);
    fs::remove_all(old_dir);
  } else {
    fs::rename(temp_dir, final_dir);
  }
  write_text_file_atomic(save_dir / kTracker, std::to_string(state.iteration) + "\n");
}

bool should_save(const CheckpointOptions& options, int64_t rollout_id, int64_t num_rollouts) {
  if (!options.save || !options.save_interval) return false;
  const int64_t interval = *options.save_interval;
  return (interval > 0 && (rollout_id + 1) % interval == 0) || rollout_id + 1 == num_rollouts;
}

std::optional<ResolvedCheckpoint> resolve_checkpoint(const fs::path& path,
                                                     std::optional<int64_t> step) {
  if (path.empty() || !fs::is_directory(path)) return std::nullopt;
  static const std::regex kIterName("iter_(\\d{7})");
  std::smatch match;
  const std::string base = path.filename().string();
  if (std::regex_match(base, match, kIterName) && fs::exists(path / "state.json")) {
    return ResolvedCheckpoint{path, false, std::stoll(match[1].str())};
  }
  if (is_hf_dir(path)) return ResolvedCheckpoint{path, true, 0};
  int64_t iteration;
  if (step.has_value()) {
    iteration = *step;
  } else if (fs::exists(path / kTracker)) {
    std::string text = read_text_file(path / kTracker);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    if (text == "release" && fs::exists(path / "release" / "state.json")) {
      return ResolvedCheckpoint{path / "release", false, 0};  // Megatron's release layout
    }
    iteration = parse_iteration(text, path / kTracker);
  } else {
    return std::nullopt;
  }
  const fs::path dir = path / iteration_dir_name(iteration);
  if (!fs::exists(dir / "state.json")) {
    throw Error(dir.string() + ": checkpoint iteration " + std::to_string(iteration) +
                " is missing or incomplete (check --ckpt-step or the tracker file)");
  }
  return ResolvedCheckpoint{dir, false, iteration};
}

ModelConfig checkpoint_model_config(const ResolvedCheckpoint& checkpoint) {
  if (checkpoint.is_hf) return ModelConfig::from_hf_dir(checkpoint.dir);
  const fs::path path = checkpoint.dir / "model" / "config.json";
  Json json = read_json(path);
  auto config = ModelConfig::from_hf_json(json, path.string());
  if (const Json* padded = json.find("vime_padded_vocab_size")) {
    config.padded_vocab_size = padded->as_int();
  }
  return config;
}

at::ScalarType stored_dtype(const ResolvedCheckpoint& checkpoint) {
  const fs::path dir = checkpoint.is_hf ? checkpoint.dir : checkpoint.dir / "model";
  auto tensors = read_safetensors_dir(dir);
  for (const auto& [name, t] : tensors)
    if (t.is_floating_point()) return t.scalar_type();
  return at::kFloat;
}

std::unique_ptr<Model> load_model(const ResolvedCheckpoint& checkpoint, at::ScalarType dtype,
                                  const at::Device& device) {
  auto model = std::make_unique<Model>(checkpoint_model_config(checkpoint), dtype, device);
  const fs::path dir = checkpoint.is_hf ? checkpoint.dir : checkpoint.dir / "model";
  model->load_tensors(read_safetensors_dir(dir), dir.string());
  return model;
}

TrainState load_checkpoint(const ResolvedCheckpoint& checkpoint, Model& model, Optimizer* optimizer,
                           bool load_rng, int64_t rank) {
  const fs::path model_dir = checkpoint.is_hf ? checkpoint.dir : checkpoint.dir / "model";
  model.load_tensors(read_safetensors_dir(model_dir), model_dir.string());
  TrainState state;
  if (checkpoint.is_hf) return state;
  Json s = read_json(checkpoint.dir / "state.json");
  state.iteration = s.at("iteration").as_int();
  state.optimizer_steps = s.at("optimizer_steps").as_int();
  state.lr_scheduler_steps = s.at("lr_scheduler_steps").as_int();
  state.data_source = s.contains("data_source") ? s.at("data_source") : Json();
  state.args = s.contains("args") ? s.at("args") : Json();
  if (optimizer != nullptr) {
    const fs::path path = checkpoint.dir / optimizer_file(rank);
    if (!fs::exists(path)) {
      throw Error(path.string() +
                  ": no optimizer state in this checkpoint (saved with --no-save-optim?); "
                  "resume with --no-load-optim");
    }
    SafetensorsFile file(path);
    NamedTensorList tensors;
    for (const auto& name : file.names()) tensors.emplace_back(name, file.get(name));
    optimizer->load_state_tensors(tensors, state.optimizer_steps, path.string());
  }
  if (load_rng && fs::exists(checkpoint.dir / "rng.safetensors")) {
    SafetensorsFile rng(checkpoint.dir / "rng.safetensors");
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(rng.get("cpu").clone());
  }
  return state;
}

ResumeResult load_for_training(const Args& args, Model& model, Optimizer& optimizer,
                               LrScheduler& lr_scheduler) {
  const CheckpointOptions options = CheckpointOptions::from(args);
  ResumeResult result;
  std::optional<ResolvedCheckpoint> from_load;
  if (options.load) from_load = resolve_checkpoint(*options.load, options.ckpt_step);
  if (from_load.has_value()) {
    const bool finetune = options.finetune || from_load->is_hf;
    const bool load_optim = !finetune && !options.no_load_optim;
    result.state = load_checkpoint(*from_load, model, load_optim ? &optimizer : nullptr,
                                   !finetune && !options.no_load_rng);
    if (!load_optim) optimizer.sync_masters_from_params();
    result.is_loaded = true;
    result.is_resumed = !finetune;
    result.from = from_load->dir;
    if (result.is_resumed) {
      lr_scheduler.set_num_steps(result.state.lr_scheduler_steps);
    } else {
      result.state = TrainState{};
    }
    return result;
  }
  if (options.ref_load) {
    auto ref = resolve_checkpoint(*options.ref_load, options.ref_ckpt_step);
    if (!ref.has_value()) {
      throw UsageError("--ref-load " + *options.ref_load + ": no checkpoint or HF model there");
    }
    load_checkpoint(*ref, model, nullptr, false);
    optimizer.sync_masters_from_params();
    result.is_loaded = true;
    result.from = ref->dir;
  }
  return result;
}

}  // namespace vime::ckpt
