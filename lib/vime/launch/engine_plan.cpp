#include "vime/launch/engine_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "vime/error.hpp"
#include "vime/http/net.hpp"
#include "vime/launch/child_process.hpp"
#include "vime/launch/vllm_config.hpp"

namespace vime::launch {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// vLLM flags in order; setting a flag again replaces it in place (the user's --vllm-* flags and
// --vllm-config overrides win over vime's defaults without repeating the flag).
class FlagList {
 public:
  void set(const std::string& name, std::vector<std::string> values = {}) {
    for (auto& [n, v] : flags_) {
      if (n == name) {
        v = std::move(values);
        return;
      }
    }
    flags_.emplace_back(name, std::move(values));
  }
  void remove(const std::string& name) {
    std::erase_if(flags_, [&](const auto& f) { return f.first == name; });
  }
  std::vector<std::string> argv() const {
    std::vector<std::string> out;
    for (const auto& [name, values] : flags_) {
      out.push_back(name);
      out.insert(out.end(), values.begin(), values.end());
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> flags_;
};

// One run of engines of one size (the default layout is a single group).
struct Group {
  std::string model;  // empty: the default layout
  std::string model_path;
  bool update_weights = true;
  bool placeholder = false;
  int num_gpus = 0;
  int gpus_per_engine = 1;
  std::vector<std::pair<std::string, Json>> overrides;
};

}  // namespace

std::vector<std::string> EngineSpec::argv(const std::string& host, int port) const {
  std::vector<std::string> out = command;
  out.insert(out.end(), {"--host", host, "--port", std::to_string(port)});
  out.insert(out.end(), flags.begin(), flags.end());
  return out;
}

PlanEnvironment PlanEnvironment::from_process() {
  PlanEnvironment env;
  if (const char* command = std::getenv("VIME_VLLM_COMMAND"); command != nullptr) {
    env.command = split_command_line(command);
    env.command_from_env = true;
    if (env.command.empty()) {
      throw UsageError(
          "VIME_VLLM_COMMAND is set but empty; unset it (vllm serve) or set a command line such "
          "as \"/path/vime serve\"");
    }
  }
  if (const char* cuda = std::getenv("CUDA_VISIBLE_DEVICES"); cuda != nullptr)
    env.cuda_visible_devices = cuda;
  env.nccl_cumem_enable_set = std::getenv("NCCL_CUMEM_ENABLE") != nullptr;
  if (!env.cuda_visible_devices) {
    int count = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() > 6 && name.compare(0, 6, "nvidia") == 0 &&
          name.find_first_not_of("0123456789", 6) == std::string::npos)
        ++count;
    }
    if (count > 0) env.host_gpu_count = count;
  }
  return env;
}

namespace {

// The engine groups to start: those of --vllm-config, or --rollout-num-gpus GPUs of
// --hf-checkpoint in engines of --rollout-num-gpus-per-engine.
std::vector<Group> engine_groups(const EnginePlanOptions& options) {
  const std::string& hf = options.hf_checkpoint;
  const int64_t per_engine = options.gpus_per_engine;
  if (per_engine < 1) {
    throw UsageError("--rollout-num-gpus-per-engine must be at least 1, not " +
                     std::to_string(per_engine));
  }
  const int64_t actor_gpus = options.actor_num_nodes * options.actor_num_gpus_per_node;
  std::optional<int64_t> rollout_gpus = options.rollout_num_gpus;
  if (!rollout_gpus && options.colocate) rollout_gpus = actor_gpus;

  std::vector<Group> groups;
  if (options.vllm_config) {
    const std::string& file = *options.vllm_config;
    int total = 0;
    for (auto& model : load_vllm_config(file, hf, static_cast<int>(per_engine))) {
      for (auto& g : model.groups) {
        groups.push_back({model.name, model.model_path, model.update_weights,
                          g.worker_type == "placeholder", g.num_gpus, g.num_gpus_per_engine,
                          std::move(g.overrides)});
        total += g.num_gpus;
      }
    }
    if (rollout_gpus && *rollout_gpus != total) {
      throw UsageError("--vllm-config " + file + ": its groups take " + std::to_string(total) +
                       " GPUs but --rollout-num-gpus is " + std::to_string(*rollout_gpus) +
                       "; make them agree or leave --rollout-num-gpus unset");
    }
  } else if (rollout_gpus.value_or(0) > 0) {
    if (*rollout_gpus % per_engine != 0) {
      throw UsageError("--rollout-num-gpus " + std::to_string(*rollout_gpus) +
                       " is not a multiple of --rollout-num-gpus-per-engine " +
                       std::to_string(per_engine));
    }
    if (hf.empty()) {
      throw UsageError(
          "--hf-checkpoint is needed to start rollout engines (or give "
          "--rollout-external-engine-addrs host:port ... to use running ones)");
    }
    groups.push_back({options.model_name,
                      hf,
                      true,
                      false,
                      static_cast<int>(*rollout_gpus),
                      static_cast<int>(per_engine),
                      {}});
  }
  return groups;
}

// `vllm serve`'s flags for engine `rank` of `group`: vime's defaults, then --vllm-* flags, then the
// group's --vllm-config overrides.
std::vector<std::string> engine_flags(const EnginePlanOptions& options, const Group& group,
                                      int rank) {
  const std::string transport = to_string(options.weight_transport);
  FlagList flags;
  flags.set("--tensor-parallel-size", {std::to_string(group.gpus_per_engine)});
  flags.set("--seed", {std::to_string(options.seed + rank)});
  // Engines the trainer updates generate in its precision; other models keep vLLM's auto.
  if (group.update_weights) flags.set("--dtype", {options.dtype});
  flags.set("--logprobs-mode", {"processed_logprobs"});
  flags.set("--generation-config", {"vllm"});
  flags.set("--enable-prompt-tokens-details");
  flags.set("--trust-remote-code");
  flags.set("--weight-transfer-config", {R"({"backend":")" + transport + R"("})"});
  // Colocated engines also reload from disk (the weight-transfer backend is the transport): vLLM's
  // colocated "ipc" backend takes pickled CUDA IPC handles, which a C++ trainer cannot make.
  if (options.engines_sleep_while_training()) flags.set("--enable-sleep-mode");
  if (options.return_routed_experts) flags.set("--enable-return-routed-experts");
  if (options.max_context_len)
    flags.set("--max-model-len", {std::to_string(*options.max_context_len)});
  if (!group.model.empty()) flags.set("--served-model-name", {group.model});
  for (const auto& f : options.vllm_flags)
    flags.set("--" + f.name.substr(std::string_view("--vllm-").size()), f.values);
  for (const auto& [key, value] : group.overrides) {
    std::string flag;
    std::vector<std::string> values;
    if (override_to_flag(key, value, &flag, &values)) {
      flags.set(flag, std::move(values));
    } else {
      flags.remove(flag);
    }
  }
  return flags.argv();
}

}  // namespace

const char* const kEngineFlagsHint =
    "--rollout-num-gpus N (engines on the GPUs after the actor's), --colocate (on the actor's "
    "GPUs), --vllm-config FILE or --rollout-external-engine-addrs HOST:PORT";

bool gives_engines(const EnginePlanOptions& options) {
  if (options.external_engine_addrs || options.vllm_config) return true;
  if (options.rollout_num_gpus) return *options.rollout_num_gpus > 0;
  return options.colocate && options.actor_num_nodes * options.actor_num_gpus_per_node > 0;
}

EnginePlan plan_engines(const EnginePlanOptions& options, const PlanEnvironment& environment) {
  EnginePlan plan;
  plan.command_from_env = environment.command_from_env;
  if (options.external_engine_addrs) {
    if (options.vllm_config) {
      throw UsageError(
          "--vllm-config and --rollout-external-engine-addrs exclude each other: vime either "
          "starts the engines of the file or uses running ones");
    }
    for (const auto& addr : *options.external_engine_addrs)
      plan.external_urls.push_back(http::normalize_url(addr, "--rollout-external-engine-addrs"));
    return plan;
  }
  if (options.prefill_num_servers) {
    throw UsageError(
        "--prefill-num-servers (prefill/decode disaggregation) is not supported yet; leave it "
        "unset");
  }
  const auto groups = engine_groups(options);
  const int64_t offset =
      options.colocate ? 0 : options.actor_num_nodes * options.actor_num_gpus_per_node;
  std::vector<std::string> visible;
  if (environment.cuda_visible_devices) visible = split_commas(*environment.cuda_visible_devices);

  int64_t cursor = offset;
  int rank = 0;
  for (const auto& group : groups) {
    if (group.placeholder) {
      cursor += group.num_gpus;
      continue;
    }
    for (int e = 0; e < group.num_gpus / group.gpus_per_engine; ++e, ++rank) {
      EngineSpec engine;
      engine.name = group.model.empty() || !options.vllm_config
                        ? "engine " + std::to_string(rank)
                        : group.model + " engine " + std::to_string(rank);
      engine.model = options.vllm_config ? group.model : "";
      engine.update_weights = group.update_weights;
      engine.rank = rank;
      engine.tensor_parallel_size = group.gpus_per_engine;
      std::vector<std::string> devices;
      for (int g = 0; g < group.gpus_per_engine; ++g, ++cursor) {
        engine.gpus.push_back(static_cast<int>(cursor));
        if (!environment.cuda_visible_devices) {
          // An index past the host's GPUs leaves the engine with none: it would start on the CPU.
          if (environment.host_gpu_count && cursor >= *environment.host_gpu_count) {
            throw UsageError(engine.name + " needs GPU " + std::to_string(cursor) +
                             " (after the actor's " + std::to_string(offset) +
                             ": --actor-num-nodes x --actor-num-gpus-per-node, default 1 x 8) "
                             "but this host has " +
                             std::to_string(*environment.host_gpu_count) +
                             " GPUs; set --actor-num-gpus-per-node to the trainer's GPUs, lower "
                             "--rollout-num-gpus or use --colocate");
          }
          devices.push_back(std::to_string(cursor));
        } else if (cursor < static_cast<int64_t>(visible.size())) {
          devices.push_back(visible[cursor]);
        } else {
          throw UsageError(engine.name + " needs GPU " + std::to_string(cursor) +
                           " (after the actor's " + std::to_string(offset) +
                           ") but CUDA_VISIBLE_DEVICES=" + *environment.cuda_visible_devices +
                           " lists " + std::to_string(visible.size()) +
                           "; lower --rollout-num-gpus or use --colocate");
        }
      }
      engine.command = environment.command;
      engine.command.push_back(group.model_path);

      engine.flags = engine_flags(options, group, rank);

      engine.env.emplace_back("CUDA_VISIBLE_DEVICES", [&] {
        std::string joined;
        for (const auto& d : devices) joined += (joined.empty() ? "" : ",") + d;
        return joined;
      }());
      engine.env.emplace_back("VLLM_SERVER_DEV_MODE", "1");
      if (!environment.nccl_cumem_enable_set) engine.env.emplace_back("NCCL_CUMEM_ENABLE", "0");
      if (options.deterministic_inference) engine.env.emplace_back("VLLM_BATCH_INVARIANT", "1");
      plan.engines.push_back(std::move(engine));
    }
  }
  const auto updated = std::find_if(plan.engines.begin(), plan.engines.end(),
                                    [](const EngineSpec& e) { return e.update_weights; });
  if (updated != plan.engines.end()) {
    plan.rollout_model = updated->model;
  } else if (!plan.engines.empty()) {
    plan.rollout_model = plan.engines.front().model;
  }
  return plan;
}

void check_engine_command(const EnginePlan& plan) {
  if (plan.engines.empty()) return;
  const EngineSpec& engine = plan.engines.front();
  const std::string& program = engine.command.front();
  if (find_program(program)) return;
  const bool path = program.find('/') != std::string::npos;
  const std::string missing =
      "'" + program + "' is not " + (path ? "an executable file" : "on PATH");
  if (plan.command_from_env) {
    std::string command;
    for (size_t i = 0; i + 1 < engine.command.size(); ++i)  // the last word is the model
      command += (i ? " " : "") + engine.command[i];
    throw Error("cannot start " + engine.name + ": VIME_VLLM_COMMAND=\"" + command +
                "\": " + missing + "; point it at a command that serves like `vllm serve` (e.g. " +
                "\"/path/to/vime serve\") or unset it to run vLLM's `vllm serve`");
  }
  throw Error("cannot start " + engine.name + ": " + missing +
              " (the vLLM backend runs `vllm serve`): install vLLM, or set VIME_VLLM_COMMAND to a "
              "command that serves like it (e.g. \"/path/to/vime serve\")");
}

}  // namespace vime::launch
