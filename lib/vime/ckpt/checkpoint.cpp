#include "vime/ckpt/checkpoint.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <regex>

#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/optimizer_shards.hpp"
#include "vime/ckpt/peft_adapter.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/core/crash_point.hpp"
#include "vime/error.hpp"

namespace vime::ckpt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTracker = "latest_checkpointed_iteration.txt";

// An unsharded optimizer's state (rank 0's replica; the name keeps Megatron's per-rank form).
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

namespace {

// The collective part of a multi-rank checkpoint: every rank's error (empty: none) to every
// rank; throws the first one, naming its rank, on all of them.
void agree_on_errors(dist::ProcessGroup* group, const std::string& error, const char* what) {
  if (group == nullptr) {
    if (!error.empty()) throw Error(error);
    return;
  }
  const auto errors = group->all_gather_bytes(error);
  for (size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r].empty()) {
      throw Error(std::string(what) + " failed on rank " + std::to_string(r) + ": " + errors[r]);
    }
  }
}

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}

// The model's tensors whole (padded vocabulary): gathered over the tensor-parallel group (every
// rank of it calls this).
NamedTensorList whole_model_tensors(const Model& model) {
  NamedTensorList tensors;
  const auto& params = model.named_parameters();
  for (size_t i = 0; i < params.size(); ++i)
    tensors.emplace_back(params[i].first, model.full_parameter(i));
  return tensors;
}

// The optimizer's whole state in the unsharded layout ("exp_avg.<name>", ... of whole
// parameters): all-gathered over the data-parallel shards, then the tensor-parallel slices
// (every rank calls this).
NamedTensorList whole_optimizer_state(const Model& model, const Optimizer& optimizer) {
  NamedTensorList out;
  for (auto& [key, t] : optimizer.gathered_state_tensors()) {
    auto param = model.find_parameter(key.substr(key.find('.') + 1));
    if (!param) {  // not the model's (a critic's value head): whole already
      out.emplace_back(key, t);
      continue;
    }
    out.emplace_back(key, gather_full(t, param->second, model.tensor_parallel()));
  }
  return out;
}

// Rank 0's part: the model, its config, the RNG, state.json and an unsharded optimizer
// (`optimizer_state`: its whole state, when it is saved in one file).
void write_rank0_files(const fs::path& dir, const Model& model, const NamedTensorList& tensors,
                       const NamedTensorList& adapter, const Optimizer* optimizer,
                       const NamedTensorList* optimizer_state, const TrainState& state,
                       const SaveOptions& options) {
  write_safetensors_dir(dir / "model", tensors);
  if (model.has_lora())
    write_peft_adapter(dir / "adapter", model.lora_config(), adapter, options.base_model);
  Json config = model.config().to_hf_json(model.dtype() == at::kBFloat16 ? "bfloat16"
                                          : model.dtype() == at::kHalf   ? "float16"
                                                                         : "float32");
  config["vime_padded_vocab_size"] = model.config().padded_vocab_size;
  write_text_file_atomic(dir / "model" / "config.json", config.dump(2) + "\n");
  crash_point("ckpt_model");
  const bool has_optimizer = optimizer != nullptr && options.save_optimizer;
  if (has_optimizer) {
    if (optimizer_state != nullptr) {
      write_safetensors(dir / optimizer_file(0), *optimizer_state);
    } else {
      write_optimizer_shards_index(dir, optimizer->world_size());
    }
    crash_point("ckpt_optimizer");
  }
  if (options.save_rng) {
    auto rng = at::detail::getDefaultCPUGenerator().get_state();
    write_safetensors(dir / "rng.safetensors", {{"cpu", rng}});
  }
  Json s = Json::object();
  s["iteration"] = state.iteration;
  s["optimizer_steps"] = optimizer != nullptr ? optimizer->num_steps() : state.optimizer_steps;
  s["lr_scheduler_steps"] = state.lr_scheduler_steps;
  s["has_optimizer"] = has_optimizer;
  s["has_rng"] = options.save_rng;
  s["data_source"] = state.data_source;
  s["args"] = state.args;
  write_text_file_atomic(dir / "state.json", s.dump(2) + "\n");
  crash_point("ckpt_state");
}

// Removes what an earlier, killed save of this iteration left in `save_dir`: its temp dir
// (<iter>.tmp.<pid>, never complete) or the copy it was replacing (<iter>.old.<pid>; the tracker
// never points at an iteration being re-saved).
void remove_stale_copies(const fs::path& save_dir, int64_t iteration) {
  const std::string name = iteration_dir_name(iteration);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(save_dir, ec)) {
    const std::string other = e.path().filename().string();
    if (other.rfind(name + ".tmp.", 0) == 0 || other.rfind(name + ".old.", 0) == 0)
      fs::remove_all(e.path());
  }
}

// Replaces an older copy of the same iteration only once the new one is complete, then points
// the tracker file at it.
void publish(const fs::path& save_dir, const fs::path& temp_dir, int64_t iteration) {
  const fs::path final_dir = save_dir / iteration_dir_name(iteration);
  if (fs::exists(final_dir)) {
    const fs::path old_dir = final_dir.string() + ".old." + std::to_string(::getpid());
    fs::rename(final_dir, old_dir);
    crash_point("ckpt_replacing");
    fs::rename(temp_dir, final_dir);
    fs::remove_all(old_dir);
  } else {
    fs::rename(temp_dir, final_dir);
  }
  crash_point("ckpt_renamed");
  write_text_file_atomic(save_dir / kTracker, std::to_string(iteration) + "\n");
}

}  // namespace

void save_checkpoint(const fs::path& save_dir, const Model& model, const Optimizer* optimizer,
                     const TrainState& state, const SaveOptions& options,
                     dist::ProcessGroup* group) {
  if (group != nullptr && group->size() == 1) group = nullptr;
  if (group == nullptr && optimizer != nullptr && options.save_optimizer &&
      (optimizer->is_sharded() || model.tensor_parallel().is_parallel() ||
       model.expert_parallel().is_parallel())) {
    throw Error(
        "saving a checkpoint of the distributed optimizer (--use-distributed-optimizer) "
        "needs every rank: pass the process group to save_checkpoint on all of them");
  }
  const int rank = group != nullptr ? group->rank() : 0;
  // Under tensor or expert parallelism everything is saved whole (a checkpoint loads at any
  // tensor-, expert- and data-parallel size): the shards are gathered first, by every rank, and
  // rank 0 writes them.
  const bool is_tp = model.tensor_parallel().is_parallel() || model.expert_parallel().is_parallel();
  const bool has_optimizer = optimizer != nullptr && options.save_optimizer;
  const bool writes_shards = has_optimizer && optimizer->is_sharded() && !is_tp;
  const NamedTensorList tensors = whole_model_tensors(model);
  const NamedTensorList adapter = model.has_lora() ? model.lora_tensors() : NamedTensorList{};
  std::optional<NamedTensorList> optimizer_state;
  if (has_optimizer && !writes_shards) optimizer_state = whole_optimizer_state(model, *optimizer);
  // Rank 0 makes the temp dir and tells the others its name (its pid makes it unique).
  std::string error;
  fs::path temp_dir;
  if (rank == 0) {
    try {
      fs::create_directories(save_dir);
      remove_stale_copies(save_dir, state.iteration);
      temp_dir =
          save_dir / (iteration_dir_name(state.iteration) + ".tmp." + std::to_string(::getpid()));
      fs::remove_all(temp_dir);
      fs::create_directories(temp_dir / "model");
    } catch (...) {
      error = message_of(std::current_exception());
    }
  }
  if (group != nullptr) {
    const std::string name = group->broadcast_bytes(error.empty() ? temp_dir.string() : "", 0);
    if (name.empty() && error.empty()) {
      error = "rank 0 could not create a temp dir under " + save_dir.string();
    }
    temp_dir = name;
  }
  if (!error.empty()) throw Error(error);
  try {
    if (rank == 0) {
      write_rank0_files(temp_dir, model, tensors, adapter, optimizer,
                        optimizer_state ? &*optimizer_state : nullptr, state, options);
    }
    if (writes_shards) write_optimizer_shard(temp_dir, *optimizer);
  } catch (...) {
    error = message_of(std::current_exception());
  }
  try {
    agree_on_errors(group, error, "saving a checkpoint");
  } catch (...) {
    if (rank == 0) fs::remove_all(temp_dir);
    throw;
  }
  if (rank == 0) {
    try {
      publish(save_dir, temp_dir, state.iteration);
    } catch (...) {
      error = message_of(std::current_exception());
      fs::remove_all(temp_dir);
    }
  }
  // Nobody goes on before the checkpoint is in place (or everybody knows it is not).
  if (group != nullptr) {
    const std::string published = group->broadcast_bytes(error, 0);
    if (!published.empty()) {
      throw Error("saving a checkpoint failed on rank 0: " + published);
    }
  } else if (!error.empty()) {
    throw Error(error);
  }
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
                                  const at::Device& device, TensorParallel tp) {
  auto model =
      std::make_unique<Model>(checkpoint_model_config(checkpoint), dtype, device, 1234, tp);
  const fs::path dir = checkpoint.is_hf ? checkpoint.dir : checkpoint.dir / "model";
  model->load_tensors(read_safetensors_dir(dir), dir.string());
  // Trained with LoRA: the adapter merged in (what the run's model computes).
  if (!checkpoint.is_hf && is_peft_adapter_dir(checkpoint.dir / "adapter"))
    merge_peft_adapter(checkpoint.dir / "adapter", *model);
  return model;
}

namespace {

// A reader of whole parameters' state as one of this rank's tensor- or expert-parallel slices:
// reads the whole state of the parameter and takes the slice.
StateReader tensor_parallel_reader(const Model& model, StateReader whole) {
  if (!model.tensor_parallel().is_parallel() && !model.expert_parallel().is_parallel())
    return whole;
  return [&model, whole](const std::string& key, at::IntArrayRef shape, int64_t offset,
                         int64_t numel) {
    auto param = model.find_parameter(key.substr(key.find('.') + 1));
    if (!param) return whole(key, shape, offset, numel);
    const auto full = whole_shape(param->first, param->second, model.tensor_parallel().size);
    int64_t full_numel = 1;
    for (auto d : full) full_numel *= d;
    auto t = whole(key, full, 0, full_numel).view(full);
    auto local = param->second.of(t).contiguous();
    if (local.sizes() != shape) {
      throw Error("optimizer state \"" + key + "\": this rank's slice has shape " +
                  c10::str(local.sizes()) + ", expected " + c10::str(shape));
    }
    return local.view(-1).narrow(0, offset, numel);
  };
}

void load_optimizer(const fs::path& iter_dir, const Model& model, Optimizer& optimizer,
                    int64_t num_steps) {
  if (fs::exists(optimizer_shards_dir(iter_dir))) {
    OptimizerShards shards(iter_dir);
    optimizer.load_state(
        tensor_parallel_reader(
            model, [&](const std::string& key, at::IntArrayRef shape, int64_t offset,
                       int64_t numel) { return shards.read(key, shape, offset, numel); }),
        num_steps);
    return;
  }
  const fs::path path = iter_dir / optimizer_file(0);
  if (!fs::exists(path)) {
    throw Error(path.string() +
                ": no optimizer state in this checkpoint (saved with --no-save-optim?); "
                "resume with --no-load-optim");
  }
  SafetensorsFile file(path);
  std::map<std::string, at::Tensor> tensors;
  for (const auto& name : file.names()) tensors.emplace(name, file.get(name));
  optimizer.load_state(
      tensor_parallel_reader(
          model,
          [&](const std::string& key, at::IntArrayRef shape, int64_t offset, int64_t numel) {
            auto it = tensors.find(key);
            if (it == tensors.end()) {
              throw Error(path.string() + ": optimizer state \"" + key +
                          "\" is missing (load with --no-load-optim to start the optimizer "
                          "afresh)");
            }
            if (it->second.sizes() != shape) {
              throw Error(path.string() + ": optimizer state \"" + key + "\" has shape " +
                          c10::str(it->second.sizes()) + ", expected " + c10::str(shape));
            }
            return it->second.reshape(-1).narrow(0, offset, numel);
          }),
      num_steps);
}

// The checkpoint's LoRA adapter, if it has one: into the model's adapters, or merged into a model
// without any unless its optimizer state (the adapters') is to be resumed.
void load_adapter(const fs::path& iter_dir, Model& model, bool resumes_optimizer) {
  const fs::path dir = iter_dir / "adapter";
  if (!is_peft_adapter_dir(dir)) return;
  if (model.has_lora()) return apply_peft_adapter(dir, model);
  if (resumes_optimizer) {
    const auto adapter = read_peft_adapter(dir);
    std::string targets;
    for (const auto& m : adapter.config.target_modules) targets += " " + m;
    throw UsageError(iter_dir.string() + " was trained with LoRA: resume it with --lora-rank " +
                     std::to_string(adapter.config.rank) + " --lora-alpha " +
                     c10::str(adapter.config.alpha) + " --target-modules" + targets +
                     " (or start from its merged weights with --no-load-optim)");
  }
  merge_peft_adapter(dir, model);
}

}  // namespace

TrainState load_checkpoint(const ResolvedCheckpoint& checkpoint, Model& model, Optimizer* optimizer,
                           bool load_rng, dist::ProcessGroup* group) {
  if (group != nullptr && group->size() == 1) group = nullptr;
  TrainState state;
  std::string error;
  try {
    const fs::path model_dir = checkpoint.is_hf ? checkpoint.dir : checkpoint.dir / "model";
    model.load_tensors(read_safetensors_dir(model_dir), model_dir.string());
    if (!checkpoint.is_hf) load_adapter(checkpoint.dir, model, optimizer != nullptr);
    if (!checkpoint.is_hf) {
      Json s = read_json(checkpoint.dir / "state.json");
      state.iteration = s.at("iteration").as_int();
      state.optimizer_steps = s.at("optimizer_steps").as_int();
      state.lr_scheduler_steps = s.at("lr_scheduler_steps").as_int();
      state.data_source = s.contains("data_source") ? s.at("data_source") : Json();
      state.args = s.contains("args") ? s.at("args") : Json();
      if (optimizer != nullptr) {
        load_optimizer(checkpoint.dir, model, *optimizer, state.optimizer_steps);
      }
      if (load_rng && fs::exists(checkpoint.dir / "rng.safetensors")) {
        SafetensorsFile rng(checkpoint.dir / "rng.safetensors");
        at::Generator generator = at::detail::getDefaultCPUGenerator();
        generator.set_state(rng.get("cpu").clone());
      }
    }
  } catch (...) {
    if (group == nullptr) throw;  // alone: the error as it was thrown
    error = message_of(std::current_exception());
  }
  if (group != nullptr) {
    const auto errors = group->all_gather_bytes(error);
    for (const auto& e : errors)  // the same message on every rank
      if (!e.empty()) throw Error(e);
  }
  return state;
}

ResumeResult load_for_training(const Args& args, Model& model, Optimizer& optimizer,
                               LrScheduler& lr_scheduler, dist::ProcessGroup* group) {
  const CheckpointOptions options = CheckpointOptions::from(args);
  ResumeResult result;
  if (options.load && is_peft_adapter_dir(*options.load)) {
    // A PEFT adapter: the base from --ref-load, then the adapter (a fresh start).
    std::optional<ResolvedCheckpoint> base;
    if (options.ref_load) base = resolve_checkpoint(*options.ref_load, options.ref_ckpt_step);
    if (!base) {
      throw UsageError(
          "--load " + *options.load +
          " is a PEFT adapter: its base model comes from --ref-load, which holds none");
    }
    load_checkpoint(*base, model, nullptr, false, group);
    if (model.has_lora()) {
      apply_peft_adapter(*options.load, model);
    } else {
      merge_peft_adapter(*options.load, model);
    }
    optimizer.sync_masters_from_params();
    result.is_loaded = true;
    result.from = *options.load;
    return result;
  }
  std::optional<ResolvedCheckpoint> from_load;
  if (options.load) from_load = resolve_checkpoint(*options.load, options.ckpt_step);
  if (from_load.has_value()) {
    const bool finetune = options.finetune || from_load->is_hf;
    const bool load_optim = !finetune && !options.no_load_optim;
    result.state = load_checkpoint(*from_load, model, load_optim ? &optimizer : nullptr,
                                   !finetune && !options.no_load_rng, group);
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
    load_checkpoint(*ref, model, nullptr, false, group);
    optimizer.sync_masters_from_params();
    result.is_loaded = true;
    result.from = ref->dir;
  }
  return result;
}

}  // namespace vime::ckpt
