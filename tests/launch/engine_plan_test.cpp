// engine_plan: argv and environment of the engines vime starts, for the default layout and
// --vllm-config files, and the errors of layouts vime cannot start.
#include "vime/launch/engine_plan.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"

using vime::launch::EnginePlanOptions;
using vime::launch::EngineSpec;
using vime::launch::plan_engines;
using vime::launch::PlanEnvironment;
using Strings = std::vector<std::string>;
using Env = std::vector<std::pair<std::string, std::string>>;

namespace {

EnginePlanOptions parse(Strings tokens) {
  return EnginePlanOptions::from(vime::core::parse_args(tokens));
}

PlanEnvironment bare_env() { return PlanEnvironment{}; }

std::string plan_error(Strings tokens, PlanEnvironment env = bare_env()) {
  try {
    plan_engines(parse(tokens), env);
  } catch (const vime::Error& e) {
    return e.what();
  }
  return "no error";
}

// The flags after --host/--port.
Strings flags(const EngineSpec& e) { return e.flags; }

const Strings kRequired = {"--logprobs-mode",
                           "processed_logprobs",
                           "--generation-config",
                           "vllm",
                           "--enable-prompt-tokens-details",
                           "--trust-remote-code"};

Strings concat(std::initializer_list<Strings> parts) {
  Strings out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

TEST_CASE("engine_plan: default layout after the actor's GPUs", "[launch]") {
  auto plan = plan_engines(parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "2",
                                  "--actor-num-gpus-per-node", "4", "--seed", "7"}),
                           bare_env());
  REQUIRE(plan.engines.size() == 2);
  CHECK(plan.external_urls.empty());
  const auto& e0 = plan.engines[0];
  CHECK(e0.name == "engine 0");
  CHECK(e0.argv("127.0.0.1", 8000) ==
        concat({{"vllm", "serve", "/m", "--host", "127.0.0.1", "--port", "8000",
                 "--tensor-parallel-size", "1", "--seed", "7", "--dtype", "float32"},
                kRequired,
                {"--weight-transfer-config", R"({"backend":"nccl"})"}}));
  CHECK(e0.env == Env{{"CUDA_VISIBLE_DEVICES", "4"},
                      {"VLLM_SERVER_DEV_MODE", "1"},
                      {"NCCL_CUMEM_ENABLE", "0"}});
  CHECK(e0.gpus == std::vector<int>{4});
  CHECK(plan.engines[1].gpus == std::vector<int>{5});
  CHECK(flags(plan.engines[1])[3] == "8");        // --seed seed + rank
  CHECK(flags(plan.engines[1])[5] == "float32");  // --dtype: the trainer's
  CHECK(plan.engines[1].env[0].second == "5");
}

TEST_CASE("engine_plan: engines generate in the trainer's dtype", "[launch]") {
  auto dtype_of = [](Strings tokens) {
    tokens.insert(tokens.end(), {"--hf-checkpoint", "/m", "--rollout-num-gpus", "1",
                                 "--actor-num-gpus-per-node", "1"});
    const auto f = flags(plan_engines(parse(tokens), bare_env()).engines.at(0));
    const auto it = std::find(f.begin(), f.end(), "--dtype");
    return it != f.end() && it + 1 != f.end() ? *(it + 1) : std::string("(none)");
  };
  CHECK(dtype_of({"--bf16"}) == "bfloat16");
  CHECK(dtype_of({"--fp16"}) == "float16");
  CHECK(dtype_of({}) == "float32");
  // vime owns vLLM's --dtype (as vime's vllm_utils/arguments.py does).
  CHECK_THROWS_WITH(parse({"--bf16", "--vllm-dtype", "auto"}),
                    Catch::Contains("--vllm-dtype is set by vime from --bf16"));
}

TEST_CASE("engine_plan: TP 2 over two actor nodes", "[launch]") {
  auto plan = plan_engines(
      parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "4", "--rollout-num-gpus-per-engine",
             "2", "--actor-num-nodes", "2", "--actor-num-gpus-per-node", "2"}),
      bare_env());
  REQUIRE(plan.engines.size() == 2);
  CHECK(plan.engines[0].gpus == std::vector<int>{4, 5});
  CHECK(plan.engines[1].gpus == std::vector<int>{6, 7});
  CHECK(plan.engines[1].env[0] ==
        std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "6,7"});
  CHECK(flags(plan.engines[1])[0] == "--tensor-parallel-size");
  CHECK(flags(plan.engines[1])[1] == "2");
  CHECK(plan.engines[1].tensor_parallel_size == 2);
}

TEST_CASE("engine_plan: colocate starts from GPU 0 with sleep mode and disk weights", "[launch]") {
  auto plan =
      plan_engines(parse({"--hf-checkpoint", "/m", "--colocate", "--actor-num-gpus-per-node", "4",
                          "--rollout-num-gpus-per-engine", "2", "--update-weight-transport", "disk",
                          "--update-weight-disk-dir", "/w"}),
                   bare_env());
  REQUIRE(plan.engines.size() == 2);  // rollout GPUs default to the actor's 4
  CHECK(plan.engines[0].gpus == std::vector<int>{0, 1});
  CHECK(plan.engines[1].gpus == std::vector<int>{2, 3});
  CHECK(flags(plan.engines[0]) ==
        concat({{"--tensor-parallel-size", "2", "--seed", "1234", "--dtype", "float32"},
                kRequired,
                {"--weight-transfer-config", R"({"backend":"disk"})", "--enable-sleep-mode"}}));
}

TEST_CASE("engine_plan: disk transport, determinism, context, name and --vllm-* flags",
          "[launch]") {
  auto plan = plan_engines(parse({"--hf-checkpoint",
                                  "/m",
                                  "--rollout-num-gpus",
                                  "1",
                                  "--actor-num-gpus-per-node",
                                  "1",
                                  "--update-weight-transport",
                                  "disk",
                                  "--vllm-enable-deterministic-inference",
                                  "--rollout-max-context-len",
                                  "4096",
                                  "--model-name",
                                  "qwen",
                                  "--offload-rollout",
                                  "--vllm-gpu-memory-utilization",
                                  "0.7",
                                  "--vllm-enforce-eager",
                                  "--vllm-max-num-seqs",
                                  "64",
                                  "--vllm-max-model-len",
                                  "2048"}),
                           bare_env());
  REQUIRE(plan.engines.size() == 1);
  // The user's --vllm-max-model-len replaces the one from --rollout-max-context-len in place.
  CHECK(flags(plan.engines[0]) ==
        concat({{"--tensor-parallel-size", "1", "--seed", "1234", "--dtype", "float32"},
                kRequired,
                {"--weight-transfer-config", R"({"backend":"disk"})", "--enable-sleep-mode",
                 "--max-model-len", "2048", "--served-model-name", "qwen",
                 "--gpu-memory-utilization", "0.7", "--enforce-eager", "--max-num-seqs", "64"}}));
  CHECK(plan.engines[0].env == Env{{"CUDA_VISIBLE_DEVICES", "1"},
                                   {"VLLM_SERVER_DEV_MODE", "1"},
                                   {"NCCL_CUMEM_ENABLE", "0"},
                                   {"VLLM_BATCH_INVARIANT", "1"}});
}

TEST_CASE("engine_plan: VIME_VLLM_COMMAND, CUDA_VISIBLE_DEVICES and NCCL_CUMEM_ENABLE of vime",
          "[launch]") {
  PlanEnvironment env;
  env.command = {"/x/vime", "serve"};
  env.cuda_visible_devices = "3,5,7,9";
  env.nccl_cumem_enable_set = true;
  const Strings tokens = {"--hf-checkpoint",           "/m", "--rollout-num-gpus", "2",
                          "--actor-num-gpus-per-node", "2"};
  auto plan = plan_engines(parse(tokens), env);
  REQUIRE(plan.engines.size() == 2);
  CHECK(plan.engines[1].argv("h", 1)[0] == "/x/vime");
  CHECK(plan.engines[1].argv("h", 1)[1] == "serve");
  CHECK(plan.engines[1].argv("h", 1)[2] == "/m");
  CHECK(plan.engines[0].env == Env{{"CUDA_VISIBLE_DEVICES", "7"}, {"VLLM_SERVER_DEV_MODE", "1"}});
  CHECK(plan.engines[1].env[0].second == "9");
  env.cuda_visible_devices = "0,1,2";
  CHECK(plan_error(tokens, env) ==
        "engine 1 needs GPU 3 (after the actor's 2) but CUDA_VISIBLE_DEVICES=0,1,2 lists 3; "
        "lower --rollout-num-gpus or use --colocate");
}

TEST_CASE("engine_plan: an engine placed past the host's GPUs is refused, not started on the CPU",
          "[launch]") {
  // slime's default of 8 actor GPUs on a 2-GPU host put the engine on GPU 8, which
  // CUDA_VISIBLE_DEVICES=8 hid from it: it served on the CPU and refused the NCCL weight transfer.
  PlanEnvironment env = bare_env();
  env.host_gpu_count = 2;
  CHECK(plan_error({"--hf-checkpoint", "/m", "--rollout-num-gpus", "1"}, env) ==
        "engine 0 needs GPU 8 (after the actor's 8: --actor-num-nodes x --actor-num-gpus-per-node, "
        "default 1 x 8) but this host has 2 GPUs; set --actor-num-gpus-per-node to the trainer's "
        "GPUs, lower --rollout-num-gpus or use --colocate");
  const auto plan = plan_engines(
      parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "1", "--actor-num-gpus-per-node", "1"}),
      env);
  REQUIRE(plan.engines.size() == 1);
  CHECK(plan.engines[0].env[0] == std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "1"});
  CHECK_THAT(plan_error({"--hf-checkpoint", "/m", "--rollout-num-gpus", "2",
                         "--actor-num-gpus-per-node", "1"},
                        env),
             Catch::StartsWith("engine 1 needs GPU 2"));
}

TEST_CASE("engine_plan: external engines, router only, and bad layouts", "[launch]") {
  auto plan = plan_engines(parse({"--rollout-external-engine-addrs", "10.0.0.5:8000",
                                  "http://h:9000/", "--rollout-num-gpus", "4"}),
                           bare_env());
  CHECK(plan.engines.empty());
  CHECK(plan.external_urls == Strings{"http://10.0.0.5:8000", "http://h:9000"});
  CHECK(plan_engines(parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "0"}), bare_env())
            .engines.empty());
  // Which flags give the vLLM backend engines at all (without one it would wait for none).
  using vime::launch::gives_engines;
  CHECK_FALSE(gives_engines(parse({"--hf-checkpoint", "/m"})));
  CHECK_FALSE(gives_engines(parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "0"})));
  CHECK_FALSE(gives_engines(parse({"--vllm-router-ip", "h", "--vllm-router-port", "1"})));
  CHECK(gives_engines(parse({"--rollout-num-gpus", "1"})));
  CHECK(gives_engines(parse({"--colocate"})));
  CHECK(gives_engines(parse({"--vllm-config", "x.yaml"})));
  CHECK(gives_engines(parse({"--rollout-external-engine-addrs", "h:1"})));
  CHECK(plan_error({"--rollout-external-engine-addrs", "nohost"}) ==
        "--rollout-external-engine-addrs: 'nohost' is not host:port (e.g. 10.0.0.5:8000 or "
        "http://10.0.0.5:8000)");
  CHECK(plan_error({"--hf-checkpoint", "/m", "--rollout-num-gpus", "3",
                    "--rollout-num-gpus-per-engine", "2"}) ==
        "--rollout-num-gpus 3 is not a multiple of --rollout-num-gpus-per-engine 2");
  CHECK(plan_error({"--rollout-num-gpus", "2"}).starts_with("--hf-checkpoint is needed"));
  CHECK(plan_error({"--hf-checkpoint", "/m", "--prefill-num-servers", "1"})
            .starts_with("--prefill-num-servers (prefill/decode disaggregation) is not supported"));
  CHECK(plan_error({"--vllm-config", "x.yaml", "--rollout-external-engine-addrs", "h:1"})
            .starts_with("--vllm-config and --rollout-external-engine-addrs exclude each other"));
}

TEST_CASE("engine_plan: --vllm-config groups, placeholders and overrides", "[launch]") {
  vime::test::TempDir dir;
  const auto file = dir.write("vllm.yaml", R"(vllm:
  - name: actor
    server_groups:
      - worker_type: regular
        num_gpus: 2
        overrides:
          gpu_memory_utilization: 0.8
          enforce_eager: true
          enable-sleep-mode: false
      - worker_type: placeholder
        num_gpus: 1
  - name: teacher
    model_path: /teacher
    num_gpus_per_engine: 2
    engine_groups:
      - num_gpus: 2
        overrides: {max_num_seqs: 64, compilation_config: {level: 3}, max-logprobs: null}
)");
  auto plan = plan_engines(
      parse({"--hf-checkpoint", "/m", "--vllm-config", file.string(), "--actor-num-gpus-per-node",
             "1", "--offload-rollout", "--vllm-max-logprobs", "5"}),
      bare_env());
  REQUIRE(plan.engines.size() == 3);
  CHECK(plan.rollout_model == "actor");
  const auto& a1 = plan.engines[1];
  CHECK(a1.name == "actor engine 1");
  CHECK(a1.model == "actor");
  CHECK(a1.update_weights);
  CHECK(a1.gpus == std::vector<int>{2});
  CHECK(a1.command == Strings{"vllm", "serve", "/m"});
  CHECK(
      flags(a1) ==
      concat({{"--tensor-parallel-size", "1", "--seed", "1235", "--dtype", "float32"},
              kRequired,
              {"--weight-transfer-config", R"({"backend":"nccl"})", "--served-model-name", "actor",
               "--max-logprobs", "5", "--enforce-eager", "--gpu-memory-utilization", "0.8"}}));
  const auto& t = plan.engines[2];
  CHECK(t.name == "teacher engine 2");
  CHECK_FALSE(t.update_weights);            // model_path is not --hf-checkpoint
  CHECK(t.gpus == std::vector<int>{4, 5});  // after the placeholder's GPU 3
  CHECK(t.command == Strings{"vllm", "serve", "/teacher"});
  CHECK(flags(t) == concat({{"--tensor-parallel-size", "2", "--seed", "1236"},
                            kRequired,
                            {"--weight-transfer-config", R"({"backend":"nccl"})",
                             "--enable-sleep-mode", "--served-model-name", "teacher",
                             "--compilation-config", R"({"level":3})", "--max-num-seqs", "64"}}));
}

TEST_CASE("engine_plan: rollouts go to the first model that takes the trainer's weights",
          "[launch]") {
  vime::test::TempDir dir;
  const auto file = dir.write("vllm.yaml", R"(vllm:
  - name: judge
    model_path: /judge
    server_groups: [{num_gpus: 1}]
  - name: policy
    model_path: /m
    server_groups: [{num_gpus: 1}]
)");
  auto plan = plan_engines(parse({"--hf-checkpoint", "/m", "--vllm-config", file.string(),
                                  "--actor-num-gpus-per-node", "1"}),
                           bare_env());
  REQUIRE(plan.engines.size() == 2);
  CHECK_FALSE(plan.engines[0].update_weights);
  CHECK(plan.engines[1].update_weights);
  CHECK(plan.rollout_model == "policy");
  // No model takes weights (both paths differ from --hf-checkpoint): the first one generates.
  auto frozen = plan_engines(parse({"--hf-checkpoint", "/other", "--vllm-config", file.string(),
                                    "--actor-num-gpus-per-node", "1"}),
                             bare_env());
  CHECK(frozen.rollout_model == "judge");
  CHECK(plan_engines(parse({"--rollout-external-engine-addrs", "h:1"}), bare_env())
            .rollout_model.empty());
}

TEST_CASE("engine_plan: --vllm-config errors name the file and the key", "[launch]") {
  vime::test::TempDir dir;
  auto error = [&](const std::string& yaml, Strings extra = {}) {
    const auto file = dir.write("bad.yaml", yaml).string();
    Strings tokens = {"--hf-checkpoint", "/m", "--vllm-config", file};
    tokens.insert(tokens.end(), extra.begin(), extra.end());
    std::string message = plan_error(tokens);
    const std::string prefix = "--vllm-config " + file + ": ";
    if (message.starts_with(prefix)) message = message.substr(prefix.size());
    return message;
  };
  CHECK(error("sglang: []\n") == "top level: unknown key 'sglang' (known: vllm)");
  CHECK(error("vllm: []\n") == "vllm: expected a non-empty list of models");
  CHECK(error("vllm: [{server_groups: [{num_gpus: 1}]}]\n") == "vllm[0]: missing key 'name'");
  CHECK(error("vllm: [{name: a, server_groups: [{num_gpus: 1, gpus: 2}]}]\n") ==
        "vllm[0].server_groups[0]: unknown key 'gpus' (known: worker_type, num_gpus, "
        "num_gpus_per_engine, overrides)");
  CHECK(error("vllm: [{name: a, num_gpus_per_engine: 2, server_groups: [{num_gpus: 3}]}]\n") ==
        "vllm[0].server_groups[0].num_gpus: 3 is not a multiple of the engine size 2 "
        "(num_gpus_per_engine)");
  CHECK(error("vllm: [{name: a, server_groups: [{worker_type: prefill, num_gpus: 1}]}]\n") ==
        "vllm[0].server_groups[0].worker_type: prefill engines (disaggregated serving) are not "
        "supported yet; use regular");
  CHECK(error("vllm: [{name: a, server_groups: [{worker_type: gpu, num_gpus: 1}]}]\n") ==
        "vllm[0].server_groups[0].worker_type: 'gpu' is none of regular, prefill, decode, "
        "placeholder, encoder");
  CHECK(error("vllm: [{name: a, server_groups: [{num_gpus: 0}]}]\n") ==
        "vllm[0].server_groups[0].num_gpus: expected a positive integer, got 0");
  CHECK(error("vllm: [{name: a, engine_groups: [{num_gpus: 1, overrides: {port: 1}}]}]\n") ==
        "vllm[0].engine_groups[0].overrides.port: vime sets --port itself (engine size: "
        "num_gpus_per_engine)");
  CHECK(error("vllm: [{name: a, server_groups: [{num_gpus: 1}]}, "
              "{name: a, server_groups: [{num_gpus: 1}]}]\n") ==
        "vllm[1].name: model 'a' is listed twice");
  CHECK(error("vllm: [{name: a, server_groups: [{num_gpus: 2}]}]\n", {"--rollout-num-gpus", "4"}) ==
        "its groups take 2 GPUs but --rollout-num-gpus is 4; make them agree or leave "
        "--rollout-num-gpus unset");
  CHECK(error("vllm: [{name: a, update_weights: 1, server_groups: [{num_gpus: 1}]}]\n") ==
        "vllm[0].update_weights: expected true or false");
}
