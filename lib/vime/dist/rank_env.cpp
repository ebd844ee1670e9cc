#include "vime/dist/rank_env.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "vime/core/args_lookup.hpp"
#include "vime/error.hpp"

namespace vime::dist {
namespace {

// The variables one launcher sets. Slurm sets no master address or port: MASTER_ADDR /
// MASTER_PORT (as torch.distributed reads them under srun) or the flags give them.
struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
  const char* node_rank;
  const char* master_addr;
  const char* master_port;
};

constexpr LauncherVariables kVime{"vime",
                                  "VIME_RANK",
                                  "VIME_WORLD_SIZE",
                                  "VIME_LOCAL_RANK",
                                  "VIME_LOCAL_WORLD_SIZE",
                                  "VIME_NODE_RANK",
                                  "VIME_MASTER_ADDR",
                                  "VIME_MASTER_PORT"};
constexpr LauncherVariables kTorchrun{
    "torchrun",         "RANK",       "WORLD_SIZE",  "LOCAL_RANK",
    "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT"};
constexpr LauncherVariables kSlurm{
    "slurm",        "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
    "SLURM_NODEID", "MASTER_ADDR",  "MASTER_PORT"};
constexpr int kSlurmDefaultPort = 29500;  // torchrun's default; Slurm itself names no port

bool is_slurm(const LauncherVariables& v) { return std::string_view(v.launcher) == "slurm"; }

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// The leading digits of `text` as an int ("4(x2)" -> 4 when `prefix_only`).
std::optional<int> parse_int(std::string_view text, bool prefix_only = false) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) return std::nullopt;
  if (!prefix_only && end != text.data() + text.size()) return std::nullopt;
  return value;
}

int env_int(const char* name, const char* launcher) {
  const auto text = env(name);
  const auto value = text ? parse_int(*text) : std::nullopt;
  if (!value) {
    throw UsageError(std::string(name) + "='" + text.value_or("") +
                     "' is not a non-negative integer (read as " + launcher +
                     "'s rank environment); fix or unset it");
  }
  return *value;
}

std::optional<int> env_int_if_set(const char* name, const char* launcher) {
  if (!env(name)) return std::nullopt;
  return env_int(name, launcher);
}

// Slurm's tasks on node `node` from SLURM_TASKS_PER_NODE ("2(x3),1": 2 on nodes 0-2, 1 on node 3).
std::optional<int> slurm_tasks_on_node(int node) {
  const auto text = env("SLURM_TASKS_PER_NODE");
  if (!text) return std::nullopt;
  std::string_view rest = *text;
  int first_node = 0;
  while (!rest.empty()) {
    const std::string_view item = rest.substr(0, rest.find(','));
    rest.remove_prefix(std::min(rest.size(), item.size() + 1));
    const auto tasks = parse_int(item, true);
    if (!tasks) return std::nullopt;
    int repeat = 1;
    if (const size_t x = item.find("(x"); x != std::string_view::npos) {
      const auto r = parse_int(item.substr(x + 2), true);
      if (!r) return std::nullopt;
      repeat = *r;
    }
    if (node < first_node + repeat) return tasks;
    first_node += repeat;
  }
  return std::nullopt;
}

int port_from_flag(const Args& args) {
  const auto port = core::int_if_set(args, "master_port");
  if (port && (*port < 1 || *port > 65535)) {
    throw UsageError("--master-port " + std::to_string(*port) + " is not a port (1-65535)");
  }
  return port ? static_cast<int>(*port) : 0;
}

RankEnv from_launcher(const LauncherVariables& v, const Args& args) {
  RankEnv e;
  e.launcher = v.launcher;
  if (!env(v.world_size)) {
    throw UsageError(std::string(v.rank) + " is set but " + v.world_size + " is not (" +
                     v.launcher + "'s rank environment); set both or neither");
  }
  e.rank = env_int(v.rank, v.launcher);
  e.world_size = env_int(v.world_size, v.launcher);
  if (e.world_size < 1 || e.rank >= e.world_size) {
    throw UsageError(std::string(v.rank) + "=" + std::to_string(e.rank) + " is not a rank of " +
                     v.world_size + "=" + std::to_string(e.world_size));
  }
  std::optional<int> local_world;
  if (const auto text = env(v.local_world_size)) {
    local_world = parse_int(*text, is_slurm(v));  // Slurm's "2(x3)" counts as 2
    if (!local_world || *local_world < 1) {
      throw UsageError(std::string(v.local_world_size) + "='" + *text +
                       "' is not a positive task count");
    }
  }
  const auto node_from_env = env_int_if_set(v.node_rank, v.launcher);
  const auto node_from_flag = core::int_if_set(args, "node_rank");
  if (!local_world && is_slurm(v)) local_world = slurm_tasks_on_node(node_from_env.value_or(0));
  e.local_world_size = local_world.value_or(e.world_size);
  e.local_rank = env_int_if_set(v.local_rank, v.launcher).value_or(e.rank % e.local_world_size);
  if (e.local_rank >= e.local_world_size) {
    throw UsageError(std::string(v.local_rank) + "=" + std::to_string(e.local_rank) +
                     " is not below " + v.local_world_size + "=" +
                     std::to_string(e.local_world_size));
  }
  e.node_rank = node_from_env    ? *node_from_env
                : node_from_flag ? static_cast<int>(*node_from_flag)
                                 : e.rank / e.local_world_size;

  const bool one_node = e.local_world_size >= e.world_size ||
                        (is_slurm(v) && env("SLURM_NNODES") == std::optional<std::string>("1"));
  if (auto addr = env(v.master_addr)) {
    e.master_addr = *addr;
  } else if (auto flag = core::string_if_set(args, "master_addr")) {
    e.master_addr = *flag;
  } else if (!one_node) {
    throw UsageError(std::string("rank ") + std::to_string(e.rank) + " of " +
                     std::to_string(e.world_size) + " (" + v.launcher + "): " + v.master_addr +
                     " is not set; give --master-addr HOST (node 0's address) or set " +
                     v.master_addr);
  }
  if (env(v.master_port)) {
    e.master_port = env_int(v.master_port, v.launcher);
    if (e.master_port < 1 || e.master_port > 65535) {
      throw UsageError(std::string(v.master_port) + "=" + std::to_string(e.master_port) +
                       " is not a port (1-65535)");
    }
  } else if (const int flag = port_from_flag(args); flag != 0) {
    e.master_port = flag;
  } else if (is_slurm(v)) {
    e.master_port = kSlurmDefaultPort;
  } else if (e.world_size > 1) {
    throw UsageError(std::string("rank ") + std::to_string(e.rank) + " of " +
                     std::to_string(e.world_size) + " (" + v.launcher + "): " + v.master_port +
                     " is not set; give --master-port PORT or set " + v.master_port);
  }
  return e;
}

}  // namespace

RankEnv rank_env_from_environment(const Args& args) {
  if (env(kVime.rank)) return from_launcher(kVime, args);
  if (env(kTorchrun.rank)) return from_launcher(kTorchrun, args);
  // A Slurm allocation of one task (`srun -n1`, or a batch script's own step with one task) is no
  // rank of a larger job: vime's launcher may start the local ranks there.
  if (env(kSlurm.rank) && env(kSlurm.world_size) && env_int(kSlurm.world_size, "slurm") > 1) {
    return from_launcher(kSlurm, args);
  }
  RankEnv single;
  single.launcher = "single";
  if (auto addr = core::string_if_set(args, "master_addr")) single.master_addr = *addr;
  single.master_port = port_from_flag(args);
  if (auto node = core::int_if_set(args, "node_rank")) single.node_rank = static_cast<int>(*node);
  return single;
}

}  // namespace vime::dist
