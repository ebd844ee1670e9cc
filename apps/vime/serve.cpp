// vime serve: a checkpoint behind vLLM's HTTP API (lib/vime/serve/server.hpp), for any OpenAI
// client or vime's own vLLM backend. It takes `vllm serve`'s command line as vime's launcher
// writes it, so the launcher can start it in place of vLLM.
#include <ATen/ATen.h>
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>

#include "commands.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/serve/server.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage = R"(usage: vime serve MODEL_DIR [vllm serve flags]
       vime serve --hf-checkpoint DIR [--load CKPT] [flags]

Serves the model with vime's engine behind vLLM's HTTP API: /v1/completions,
/inference/v1/generate, /tokenize, /detokenize, /pause, /resume, /is_paused, /reset_prefix_cache,
/get_world_size, /health, /v1/models, /version, /server_info, /metrics; /sleep, /wake_up,
/is_sleeping (--enable-sleep-mode); /init_weight_transfer_engine, /start_weight_update,
/update_weights, /finish_weight_update (--weight-transfer-config), /update_weight_version,
/weight_info, /collective_rpc (reload_weights). Ctrl-C or SIGTERM stops it (in-flight requests end
with finish_reason "abort").

vLLM's flags (MODEL_DIR is --hf-checkpoint):
  --host ADDR                 listen address (default 127.0.0.1)
  --port N                    listen port (default 8000; 0: any free port)
  --api-key KEY               require "Authorization: Bearer KEY" on every route but /health
  --served-model-name NAME    model id in /v1/models and responses (default: the model dir)
  --seed N                    the engine's seed (requests without a seed draw from it)
  --max-model-len N           prompt + output tokens per request (--rollout-max-context-len)
  --max-num-seqs N            requests decoded together (--vllm-server-concurrency)
  --max-num-batched-tokens N  tokens per prefill forward
  --logprobs-mode MODE        processed_logprobs (after temperature, top-k/top-p; vLLM's RL mode) or
                              raw_logprobs (log_softmax of the logits / temperature)
  --dtype auto|bfloat16|float32   parameter dtype (auto: --bf16 if given, else float32)
  --enable-sleep-mode         mount /sleep and /wake_up
  --enable-auto-tool-choice --tool-call-parser hermes   chat answers carry tool_calls
  --weight-transfer-config JSON   {"backend": "disk"} or {"backend": "nccl"}
  --tensor-parallel-size 1, --pipeline-parallel-size 1, --data-parallel-size 1   (one GPU only)
  --trust-remote-code, --enable-prompt-tokens-details, --generation-config vllm   (vime's behaviour)
  vLLM tuning flags that do not apply (--gpu-memory-utilization, --enforce-eager, ...) are
  accepted and ignored with one line on stderr.
  --help [GROUP]              all flags, or those of one group (engine flags as in `vime train`)
)";

// vLLM tuning flags with no meaning for vime's engine: accepted, reported, ignored.
const std::set<std::string> kIgnoredWithValue = {"--gpu-memory-utilization",
                                                 "--block-size",
                                                 "--swap-space",
                                                 "--kv-cache-dtype",
                                                 "--max-seq-len-to-capture",
                                                 "--cpu-offload-gb",
                                                 "--compilation-config",
                                                 "-O",
                                                 "--distributed-executor-backend",
                                                 "--data-parallel-backend",
                                                 "--max-logprobs",
                                                 "--load-format",
                                                 "--worker-extension-cls",
                                                 "--uvicorn-log-level",
                                                 "--scheduling-policy",
                                                 "--num-gpu-blocks-override",
                                                 "--long-prefill-token-threshold",
                                                 "--max-num-partial-prefills",
                                                 "--cuda-graph-sizes",
                                                 "--quantization",
                                                 "--attention-backend",
                                                 "--node-rank",
                                                 "--master-addr",
                                                 "--master-port",
                                                 "--download-dir",
                                                 "--reasoning-parser",
                                                 "--chat-template"};
const std::set<std::string> kIgnoredSwitches = {"--enforce-eager",
                                                "--enable-prefix-caching",
                                                "--no-enable-prefix-caching",
                                                "--enable-chunked-prefill",
                                                "--no-enable-chunked-prefill",
                                                "--disable-log-stats",
                                                "--disable-log-requests",
                                                "--enable-log-requests",
                                                "--disable-custom-all-reduce",
                                                "--disable-uvicorn-access-log",
                                                "--enable-return-routed-experts",
                                                "--async-scheduling",
                                                "--no-async-scheduling",
                                                "--disable-frontend-multiprocessing"};

struct VllmFlags {
  std::optional<int64_t> seed, max_model_len, max_num_seqs, max_num_batched_tokens;
  std::optional<engine::LogProbMode> logprob_mode;
};

int64_t int_value(const std::string& flag, const std::string& v, int64_t min) {
  try {
    size_t used = 0;
    const int64_t n = std::stoll(v, &used);
    if (used == v.size() && n >= min) return n;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + " must be an integer >= " + std::to_string(min) + ", got '" + v + "'");
}

Json transfer_config(const std::string& text) {
  Json config;
  try {
    config = Json::parse(text, "--weight-transfer-config");
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const Json* backend = config.is_object() ? config.find("backend") : nullptr;
  if (!backend || !backend->is_string()) {
    throw UsageError(
        "--weight-transfer-config must be a JSON object with \"backend\", e.g. "
        "'{\"backend\":\"disk\"}'");
  }
  const std::string& b = backend->as_string();
  if (b != "disk" && b != "nccl") {
    throw UsageError("--weight-transfer-config: backend \"" + b +
                     "\" is not supported by vime serve; use \"nccl\" or \"disk\"");
  }
  return config;
}

// Takes vLLM's and the serve-only flags out of argv; the rest are slime's flags.
Arguments take_serve_flags(const Arguments& argv, serve::ServeOptions& o, VllmFlags& v,
                           bool& name_set) {
  Arguments rest;
  bool auto_tool_choice = false;
  size_t i = 0;
  if (!argv.empty() && !argv[0].empty() && argv[0][0] != '-') {  // vllm serve MODEL_DIR
    rest.push_back("--hf-checkpoint");
    rest.push_back(argv[0]);
    i = 1;
  }
  for (; i < argv.size(); ++i) {
    std::string a = argv[i];
    std::optional<std::string> inline_value;  // --flag=value
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = a.substr(eq + 1);
      a.resize(eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argv.size()) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--host") {
      o.host = value();
    } else if (a == "--port") {
      const int64_t port = int_value(a, value(), 0);
      if (port > 65535) throw UsageError("--port must be a port number in [0, 65535]");
      o.port = static_cast<int>(port);
    } else if (a == "--api-key") {
      o.api_key = value();
    } else if (a == "--served-model-name") {
      o.model_name = value();
      name_set = true;
    } else if (a == "--seed") {
      v.seed = int_value(a, value(), 0);
    } else if (a == "--max-model-len") {
      v.max_model_len = int_value(a, value(), 2);
    } else if (a == "--max-num-seqs") {
      v.max_num_seqs = int_value(a, value(), 1);
    } else if (a == "--max-num-batched-tokens") {
      v.max_num_batched_tokens = int_value(a, value(), 1);
    } else if (a == "--logprobs-mode") {
      const std::string mode = value();
      if (mode == "processed_logprobs") {
        v.logprob_mode = engine::LogProbMode::kProcessed;
      } else if (mode == "raw_logprobs") {
        v.logprob_mode = engine::LogProbMode::kTemperature;
      } else {
        throw UsageError("--logprobs-mode " + mode +
                         " is not supported by vime serve; use processed_logprobs or raw_logprobs");
      }
    } else if (a == "--tensor-parallel-size" || a == "-tp" || a == "--pipeline-parallel-size" ||
               a == "-pp" || a == "--data-parallel-size" || a == "-dp" || a == "--nnodes") {
      const std::string n = value();
      if (int_value(a, n, 1) != 1) {
        throw UsageError(a + " " + n + ": vime serve runs one GPU (start one server per GPU)");
      }
    } else if (a == "--headless") {
      throw UsageError("--headless: vime serve runs one GPU on one node");
    } else if (a == "--enable-sleep-mode") {
      o.enable_sleep_mode = true;
    } else if (a == "--enable-auto-tool-choice") {
      auto_tool_choice = true;
    } else if (a == "--tool-call-parser") {
      o.tool_call_parser = value();
      if (o.tool_call_parser != "hermes") {
        throw UsageError("--tool-call-parser " + o.tool_call_parser +
                         ": vime serve parses hermes tool calls (<tool_call> JSON: Qwen2.5, Qwen3, "
                         "Hermes); use --tool-call-parser hermes or leave tool calls in content");
      }
    } else if (a == "--weight-transfer-config") {
      o.weight_transfer_config = transfer_config(value());
    } else if (a == "--dtype") {
      const std::string dtype = value();
      if (dtype == "bfloat16" || dtype == "bf16") {
        rest.push_back("--bf16");
      } else if (dtype != "auto" && dtype != "float32" && dtype != "float") {
        throw UsageError("--dtype " + dtype + ": vime serve runs auto, bfloat16 or float32");
      }
    } else if (a == "--generation-config") {
      // vime serve never takes sampling defaults from generation_config.json (vLLM's "vllm").
      if (const std::string g = value(); g != "vllm") {
        std::cerr << "vime serve: --generation-config " << g
                  << " ignored; sampling defaults are vLLM's own (as --generation-config vllm)\n";
      }
    } else if (a == "--trust-remote-code" || a == "--enable-prompt-tokens-details") {
      // No remote code is ever run; usage.prompt_tokens_details is always there.
    } else if (kIgnoredWithValue.count(a)) {
      const std::string ignored = value();
      std::cerr << "vime serve: " << a << " " << ignored << " does not apply; ignored\n";
    } else if (kIgnoredSwitches.count(a)) {
      if (inline_value) throw UsageError(a + " takes no value");
      std::cerr << "vime serve: " << a << " does not apply; ignored\n";
    } else {
      rest.push_back(argv[i]);  // slime's flag (or an unknown one: parse_args names it)
    }
  }
  // vLLM takes the two together: the parser reads tool calls only under auto tool choice.
  if (auto_tool_choice != !o.tool_call_parser.empty()) {
    throw UsageError(
        "--enable-auto-tool-choice and --tool-call-parser go together (e.g. "
        "--enable-auto-tool-choice "
        "--tool-call-parser hermes)");
  }
  return rest;
}

}  // namespace

int run_serve(const Arguments& argv) {
  if (print_flags_help_if_asked(argv, kUsage)) return 0;
  serve::ServeOptions options;
  VllmFlags vllm;
  bool name_set = false;
  const Args args =
      loop::with_run_defaults(core::parse_args(take_serve_flags(argv, options, vllm, name_set)));
  if (!args.is_set("hf_checkpoint")) {
    throw UsageError("vime serve needs a model: vime serve MODEL_DIR (or --hf-checkpoint DIR)");
  }

  // SIGINT/SIGTERM go to sigwait below, not to the server's threads (started after this).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto tokenizer = loop::load_run_tokenizer(args);
  const auto source = loop::actor_source(args);
  auto model = ckpt::load_model(source, loop::run_dtype(args), loop::run_device());
  model->set_requires_grad(false);
  auto engine_options = loop::engine_options(args);
  if (vllm.seed) engine_options.seed = static_cast<uint64_t>(*vllm.seed);
  if (vllm.max_model_len) engine_options.max_context_len = *vllm.max_model_len;
  if (vllm.max_num_seqs) engine_options.max_running_requests = *vllm.max_num_seqs;
  if (vllm.max_num_batched_tokens) engine_options.max_prefill_tokens = *vllm.max_num_batched_tokens;
  if (vllm.logprob_mode) engine_options.logprob_mode = *vllm.logprob_mode;
  engine::NativeEngine engine(*model, tokenizer.get(), engine_options);
  if (!name_set) options.model_name = args.get_string("hf_checkpoint");
  options.model_dir = source.is_hf ? source.dir.string() : args.get_string("hf_checkpoint");
  options.max_model_len = engine_options.max_context_len > 0
                              ? engine_options.max_context_len
                              : model->config().max_position_embeddings;
  serve::Server server(engine, *model, *tokenizer, options);
  server.start();
  std::cout << "vime serve: " << source.dir.string() << " at " << server.url() << std::endl;

  int signal = 0;
  sigwait(&signals, &signal);
  std::cout << "vime serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ", aborting in-flight requests and stopping" << std::endl;
  server.stop();
  return 0;
}

}  // namespace vime::app
