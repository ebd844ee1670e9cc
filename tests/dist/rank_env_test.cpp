// rank_env_from_environment under vime's launcher, torchrun and Slurm variables, their precedence
// and the errors that name a bad variable; local_launch_plan's decisions (no processes started).
#include "vime/dist/rank_env.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vime/core/arg_parser.hpp"
#include "vime/dist/local_launcher.hpp"
#include "vime/error.hpp"

using Catch::Matchers::Contains;
using vime::UsageError;
using vime::dist::local_launch_plan;
using vime::dist::rank_env_from_environment;

namespace {

// Every variable rank_env reads: cleared for the test's lifetime, the test's own set, all
// restored afterwards.
class ScopedRankEnv {
 public:
  explicit ScopedRankEnv(std::initializer_list<std::pair<std::string, std::string>> vars) {
    for (const char* name : kNames) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      ::unsetenv(name);
    }
    for (const auto& [name, value] : vars) {
      REQUIRE(saved_.count(name) == 1);  // a variable this guard restores
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedRankEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  static constexpr const char* kNames[] = {
      "VIME_RANK",      "VIME_WORLD_SIZE",  "VIME_LOCAL_RANK",       "VIME_LOCAL_WORLD_SIZE",
      "VIME_NODE_RANK", "VIME_MASTER_ADDR", "VIME_MASTER_PORT",      "RANK",
      "WORLD_SIZE",     "LOCAL_RANK",       "LOCAL_WORLD_SIZE",      "GROUP_RANK",
      "MASTER_ADDR",    "MASTER_PORT",      "SLURM_PROCID",          "SLURM_NTASKS",
      "SLURM_LOCALID",  "SLURM_NODEID",     "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
      "SLURM_NNODES"};
  std::map<std::string, std::optional<std::string>> saved_;
};

vime::Args args_of(std::vector<std::string> flags = {}) { return vime::core::parse_args(flags); }

}  // namespace

TEST_CASE("rank_env: no launcher is a world of one; the flags fill the address", "[dist]") {
  ScopedRankEnv guard({});
  auto env = rank_env_from_environment(args_of());
  CHECK(env.launcher == "single");
  CHECK(env.is_single());
  CHECK(env.rank == 0);
  CHECK(env.master_addr == "127.0.0.1");
  CHECK(env.master_port == 0);
  env = rank_env_from_environment(args_of({"--master-addr", "10.0.0.5", "--master-port", "4242"}));
  CHECK(env.master_addr == "10.0.0.5");
  CHECK(env.master_port == 4242);
  CHECK_THROWS_WITH(rank_env_from_environment(args_of({"--master-port", "70000"})),
                    Contains("--master-port 70000 is not a port"));
}

TEST_CASE("rank_env: vime's launcher variables", "[dist]") {
  ScopedRankEnv guard({{"VIME_RANK", "5"},
                       {"VIME_WORLD_SIZE", "8"},
                       {"VIME_LOCAL_RANK", "1"},
                       {"VIME_LOCAL_WORLD_SIZE", "4"},
                       {"VIME_NODE_RANK", "1"},
                       {"VIME_MASTER_ADDR", "node0"},
                       {"VIME_MASTER_PORT", "29999"},
                       // torchrun's too: vime's own come first
                       {"RANK", "0"},
                       {"WORLD_SIZE", "2"}});
  const auto env = rank_env_from_environment(args_of({"--master-addr", "ignored"}));
  CHECK(env.launcher == "vime");
  CHECK(env.rank == 5);
  CHECK(env.world_size == 8);
  CHECK(env.local_rank == 1);
  CHECK(env.local_world_size == 4);
  CHECK(env.node_rank == 1);
  CHECK(env.master_addr == "node0");
  CHECK(env.master_port == 29999);
  CHECK_FALSE(env.is_single());
}

TEST_CASE("rank_env: torchrun's variables", "[dist]") {
  ScopedRankEnv guard({{"RANK", "3"},
                       {"WORLD_SIZE", "4"},
                       {"LOCAL_RANK", "1"},
                       {"LOCAL_WORLD_SIZE", "2"},
                       {"GROUP_RANK", "1"},
                       {"MASTER_ADDR", "10.1.2.3"},
                       {"MASTER_PORT", "29500"}});
  const auto env = rank_env_from_environment(args_of());
  CHECK(env.launcher == "torchrun");
  CHECK(env.rank == 3);
  CHECK(env.world_size == 4);
  CHECK(env.local_rank == 1);
  CHECK(env.local_world_size == 2);
  CHECK(env.node_rank == 1);
  CHECK(env.master_addr == "10.1.2.3");
  CHECK(env.master_port == 29500);
}

TEST_CASE("rank_env: torchrun's variables, bad values name the variable", "[dist]") {
  SECTION("not a number") {
    ScopedRankEnv guard({{"RANK", "one"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}});
    CHECK_THROWS_AS(rank_env_from_environment(args_of()), UsageError);
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("RANK='one' is not a non-negative integer"));
  }
  SECTION("rank out of the world") {
    ScopedRankEnv guard({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}});
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("RANK=2 is not a rank of WORLD_SIZE=2"));
  }
  SECTION("RANK without WORLD_SIZE") {
    ScopedRankEnv guard({{"RANK", "0"}});
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("RANK is set but WORLD_SIZE is not"));
  }
  SECTION("a port out of range") {
    ScopedRankEnv guard({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "65536"}});
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("MASTER_PORT=65536 is not a port"));
  }
  SECTION("no port: MASTER_PORT, else --master-port") {
    ScopedRankEnv guard({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("MASTER_PORT is not set; give --master-port"));
    CHECK(rank_env_from_environment(args_of({"--master-port", "1234"})).master_port == 1234);
  }
  SECTION("LOCAL_RANK beyond LOCAL_WORLD_SIZE") {
    ScopedRankEnv guard({{"RANK", "0"},
                         {"WORLD_SIZE", "2"},
                         {"LOCAL_RANK", "2"},
                         {"LOCAL_WORLD_SIZE", "2"},
                         {"MASTER_PORT", "1"}});
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2"));
  }
}

TEST_CASE("rank_env: Slurm's variables, the address from MASTER_ADDR or --master-addr", "[dist]") {
  SECTION("multi-node with --master-addr; 29500 by default") {
    ScopedRankEnv guard({{"SLURM_PROCID", "5"},
                         {"SLURM_NTASKS", "8"},
                         {"SLURM_LOCALID", "1"},
                         {"SLURM_NODEID", "2"},
                         {"SLURM_TASKS_PER_NODE", "2(x4)"}});
    const auto env = rank_env_from_environment(args_of({"--master-addr", "gpu-node-0"}));
    CHECK(env.launcher == "slurm");
    CHECK(env.rank == 5);
    CHECK(env.world_size == 8);
    CHECK(env.local_rank == 1);
    CHECK(env.local_world_size == 2);
    CHECK(env.node_rank == 2);
    CHECK(env.master_addr == "gpu-node-0");
    CHECK(env.master_port == 29500);
  }
  SECTION("MASTER_ADDR and MASTER_PORT win over the flags; SLURM_NTASKS_PER_NODE") {
    ScopedRankEnv guard({{"SLURM_PROCID", "0"},
                         {"SLURM_NTASKS", "4"},
                         {"SLURM_LOCALID", "0"},
                         {"SLURM_NODEID", "0"},
                         {"SLURM_NTASKS_PER_NODE", "2"},
                         {"MASTER_ADDR", "head"},
                         {"MASTER_PORT", "31000"}});
    const auto env =
        rank_env_from_environment(args_of({"--master-addr", "other", "--master-port", "32000"}));
    CHECK(env.master_addr == "head");
    CHECK(env.master_port == 31000);
    CHECK(env.local_world_size == 2);
  }
  SECTION("one node needs no address") {
    ScopedRankEnv guard({{"SLURM_PROCID", "1"},
                         {"SLURM_NTASKS", "2"},
                         {"SLURM_LOCALID", "1"},
                         {"SLURM_NNODES", "1"}});
    const auto env = rank_env_from_environment(args_of({"--master-port", "31001"}));
    CHECK(env.master_addr == "127.0.0.1");
    CHECK(env.master_port == 31001);
  }
  SECTION("several nodes and no address: names MASTER_ADDR and --master-addr") {
    ScopedRankEnv guard({{"SLURM_PROCID", "1"},
                         {"SLURM_NTASKS", "4"},
                         {"SLURM_NTASKS_PER_NODE", "2"},
                         {"SLURM_NNODES", "2"}});
    CHECK_THROWS_AS(rank_env_from_environment(args_of()), UsageError);
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("MASTER_ADDR is not set; give --master-addr"));
  }
  SECTION("a bad SLURM_LOCALID") {
    ScopedRankEnv guard({{"SLURM_PROCID", "1"},
                         {"SLURM_NTASKS", "2"},
                         {"SLURM_LOCALID", "x"},
                         {"SLURM_NNODES", "1"}});
    CHECK_THROWS_WITH(rank_env_from_environment(args_of()),
                      Contains("SLURM_LOCALID='x' is not a non-negative integer"));
  }
  SECTION("a step of one task is no rank: vime's launcher may start the local ranks") {
    ScopedRankEnv guard({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}});
    CHECK(rank_env_from_environment(args_of()).launcher == "single");
    auto plan = local_launch_plan(args_of({"--actor-num-gpus-per-node", "2"}), {"vime"}, 0);
    CHECK(plan.has_value());
  }
}

TEST_CASE("local_launch_plan: when vime launches ranks itself", "[dist]") {
  ScopedRankEnv guard({});
  const std::vector<std::string> argv{"vime", "train", "--actor-num-gpus-per-node", "2"};
  SECTION("slime's default of 8 GPUs per node launches nothing") {
    CHECK_FALSE(local_launch_plan(args_of(), argv, 0));
    CHECK_FALSE(local_launch_plan(args_of({"--actor-num-gpus-per-node", "1"}), argv, 4));
  }
  SECTION("an explicit --actor-num-gpus-per-node: the same argv, this binary") {
    const auto plan = local_launch_plan(args_of({"--actor-num-gpus-per-node", "2"}), argv, 0);
    REQUIRE(plan);
    CHECK(plan->gpus_per_node == 2);
    CHECK(plan->num_nodes == 1);
    CHECK(plan->node_rank == 0);
    CHECK(plan->master_port == 0);
    CHECK(plan->argv.size() == argv.size());
    CHECK(plan->argv[0].find('/') == 0);  // /proc/self/exe, resolved
    CHECK(::access(plan->argv[0].c_str(), X_OK) == 0);
    CHECK(plan->argv[3] == "2");
  }
  SECTION("more ranks than visible GPUs names the flag") {
    CHECK_THROWS_AS(local_launch_plan(args_of({"--actor-num-gpus-per-node", "4"}), argv, 2),
                    UsageError);
    CHECK_THROWS_WITH(local_launch_plan(args_of({"--actor-num-gpus-per-node", "4"}), argv, 2),
                      Contains("--actor-num-gpus-per-node 4") && Contains("only 2 GPU(s)"));
  }
  SECTION("several nodes: --node-rank, --master-addr and --master-port are needed") {
    CHECK_THROWS_WITH(local_launch_plan(args_of({"--actor-num-nodes", "2"}), argv, 0),
                      Contains("--node-rank is missing"));
    CHECK_THROWS_WITH(
        local_launch_plan(args_of({"--actor-num-nodes", "2", "--node-rank", "1"}), argv, 0),
        Contains("needs --master-addr"));
    CHECK_THROWS_WITH(local_launch_plan(args_of({"--actor-num-nodes", "2", "--node-rank", "1",
                                                 "--master-addr", "n0"}),
                                        argv, 0),
                      Contains("needs --master-port"));
    CHECK_THROWS_WITH(local_launch_plan(args_of({"--actor-num-nodes", "2", "--node-rank", "2",
                                                 "--master-addr", "n0", "--master-port", "7"}),
                                        argv, 0),
                      Contains("--node-rank 2 is not a node"));
    const auto plan = local_launch_plan(
        args_of({"--actor-num-nodes", "2", "--actor-num-gpus-per-node", "4", "--node-rank", "1",
                 "--master-addr", "n0", "--master-port", "7000"}),
        argv, 8);
    REQUIRE(plan);
    CHECK(plan->num_nodes == 2);
    CHECK(plan->gpus_per_node == 4);
    CHECK(plan->node_rank == 1);
    CHECK(plan->master_addr == "n0");
    CHECK(plan->master_port == 7000);
  }
}

TEST_CASE("local_launch_plan: a rank of torchrun launches nothing, and must agree on the size",
          "[dist]") {
  ScopedRankEnv guard({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}});
  const std::vector<std::string> argv{"vime", "train"};
  CHECK_FALSE(local_launch_plan(args_of(), argv, 0));
  CHECK_FALSE(local_launch_plan(args_of({"--actor-num-gpus-per-node", "2"}), argv, 2));
  CHECK_THROWS_WITH(local_launch_plan(args_of({"--actor-num-gpus-per-node", "8"}), argv, 8),
                    Contains("torchrun started 2 ranks but --actor-num-nodes 1 x "
                             "--actor-num-gpus-per-node 8 asks for 8"));
}
