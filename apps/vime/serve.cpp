// vime serve: a checkpoint behind vLLM's HTTP API (lib/vime/serve/server.hpp), for any OpenAI
// client or vime's own vLLM backend. It takes `vllm serve`'s command line as vime's launcher
// writes it, so the launcher can start it in place of vLLM.
#include <ATen/ATen.h>
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/core/flags/command_flags.hpp"
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

vLLM's flags are listed in the group [serve] below (MODEL_DIR is --hf-checkpoint); --dtype bfloat16
is --bf16. --tensor-parallel-size, --pipeline-parallel-size, --data-parallel-size and --nnodes take
1 only (one GPU). vLLM tuning flags that do not apply (--swap-space, ...) are
accepted and ignored with one line on stderr. The engine takes vime train's flags.
  --help [GROUP]              all flags, or those of one group (engine flags as in `vime train`)
)";

// `vime serve`'s own flags (core::flags::serve_command()), checked and read once.
struct ServeCommandOptions {
  serve::ServeOptions server;
  std::string hf_checkpoint;  // MODEL_DIR, unless --hf-checkpoint is on the command line too
  std::optional<int64_t> seed, max_model_len, max_num_seqs, max_num_batched_tokens, block_size;
  std::optional<double> gpu_memory_utilization;
  bool enforce_eager = false;
  std::optional<engine::LogProbMode> logprob_mode;
  std::optional<at::ScalarType> dtype;  // --dtype; nullopt: auto (serve_dtype)
  std::vector<std::string> notices;     // flags accepted and ignored, one stderr line each

  static ServeCommandOptions from(const Args& args);
};

std::optional<int64_t> at_least(const Args& args, const char* key, int64_t min) {
  const auto value = args.get_optional_int(key);
  if (value && *value < min) {
    throw UsageError(args.flag_name(key) + " must be an integer >= " + std::to_string(min) +
                     ", got '" + std::to_string(*value) + "'");
  }
  return value;
}

Json transfer_config(const Json& config) {
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

ServeCommandOptions ServeCommandOptions::from(const Args& args) {
  ServeCommandOptions o;
  for (const char* key :
       {"tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "nnodes"}) {
    if (args.get_int(key) != 1) {
      throw UsageError(args.flag_name(key) + " " + std::to_string(args.get_int(key)) +
                       ": vime serve runs one GPU (start one server per GPU)");
    }
  }
  if (args.get_bool("headless"))
    throw UsageError("--headless: vime serve runs one GPU on one node");
  // `vllm serve MODEL_DIR` is `--hf-checkpoint MODEL_DIR` first on the command line.
  const char* model_key =
      args.source("hf_checkpoint") == ArgSource::kCommandLine || !args.is_set("model_dir")
          ? "hf_checkpoint"
          : "model_dir";
  if (!args.is_set(model_key)) {
    throw UsageError("no model: vime serve MODEL_DIR (or --hf-checkpoint DIR)");
  }
  o.hf_checkpoint = args.get_string(model_key);
  o.server.model_name = o.hf_checkpoint;
  o.server.host = args.get_string("host");
  const int64_t port = args.get_int("port");
  if (port < 0 || port > 65535) throw UsageError("--port must be a port number in [0, 65535]");
  o.server.port = static_cast<int>(port);
  if (args.is_set("api_key")) o.server.api_key = args.get_string("api_key");
  if (args.is_set("served_model_name")) o.server.model_name = args.get_string("served_model_name");
  o.seed = at_least(args, "seed", 0);
  o.max_model_len = at_least(args, "max_model_len", 2);
  o.max_num_seqs = at_least(args, "max_num_seqs", 1);
  o.max_num_batched_tokens = at_least(args, "max_num_batched_tokens", 1);
  if (args.is_set("logprobs_mode")) {
    o.logprob_mode = args.get_string("logprobs_mode") == "processed_logprobs"
                         ? engine::LogProbMode::kProcessed
                         : engine::LogProbMode::kTemperature;
  }
  o.block_size = at_least(args, "block_size", 1);
  if (args.is_set("gpu_memory_utilization")) {
    const double f = args.get_double("gpu_memory_utilization");
    if (!(f > 0 && f <= 1)) {
      throw UsageError("--gpu-memory-utilization must be in (0, 1], got '" + std::to_string(f) +
                       "'");
    }
    o.gpu_memory_utilization = f;
  }
  const std::string dtype = args.get_string("dtype");
  if (dtype == "bfloat16" || dtype == "bf16") o.dtype = at::kBFloat16;
  if (dtype == "float16" || dtype == "half") o.dtype = at::kHalf;
  if (dtype == "float32" || dtype == "float") o.dtype = at::kFloat;
  o.server.enable_sleep_mode = args.get_bool("enable_sleep_mode");
  o.server.enable_return_routed_experts = args.get_bool("enable_return_routed_experts");
  o.enforce_eager = args.get_bool("enforce_eager");
  o.server.max_request_bytes = args.get_int("max_request_bytes");
  if (o.server.max_request_bytes < 0)
    throw UsageError("--max-request-bytes must be >= 0 (0: no limit)");
  if (args.is_set("tool_call_parser")) {
    o.server.tool_call_parser = args.get_string("tool_call_parser");
    if (o.server.tool_call_parser != "hermes") {
      throw UsageError("--tool-call-parser " + o.server.tool_call_parser +
                       ": vime serve parses hermes tool calls (<tool_call> JSON: Qwen2.5, Qwen3, "
                       "Hermes); use --tool-call-parser hermes or leave tool calls in content");
    }
  }
  // vLLM takes the two together: the parser reads tool calls only under auto tool choice.
  if (args.get_bool("enable_auto_tool_choice") != !o.server.tool_call_parser.empty()) {
    throw UsageError(
        "--enable-auto-tool-choice and --tool-call-parser go together (e.g. "
        "--enable-auto-tool-choice "
        "--tool-call-parser hermes)");
  }
  if (args.is_set("weight_transfer_config")) {
    o.server.weight_transfer_config = transfer_config(args.get("weight_transfer_config"));
  }
  // vime serve never takes sampling defaults from generation_config.json (vLLM's "vllm").
  if (const std::string g = args.get_string("generation_config"); g != "vllm") {
    o.notices.push_back("--generation-config " + g +
                        " ignored; sampling defaults are vLLM's own (as --generation-config vllm)");
  }
  for (const auto& setting : core::no_effect_settings(args, core::flags::serve_flags(), "serve")) {
    o.notices.push_back(setting + " does not apply; ignored");
  }
  return o;
}

// vLLM's --dtype: as given; auto is --bf16/--fp16 when given, else on CUDA the checkpoint's
// torch_dtype with float32 served as bfloat16 (vLLM's auto), and float32 on the CPU.
at::ScalarType serve_dtype(const ServeCommandOptions& o, const Args& args,
                           const ckpt::ResolvedCheckpoint& source, const at::Device& device) {
  if (o.dtype) return *o.dtype;
  const at::ScalarType flags = loop::run_dtype(args);
  if (flags != at::kFloat || !device.is_cuda()) return flags;
  const auto config = source.dir / "config.json";
  if (source.is_hf && std::filesystem::exists(config)) {
    const Json hf = Json::parse(read_text_file(config), config.string());
    const Json* dtype = hf.find("torch_dtype");
    if (dtype && dtype->is_string() && dtype->as_string() == "float16") return at::kHalf;
  }
  return at::kBFloat16;
}

const char* dtype_name(at::ScalarType dtype) {
  return dtype == at::kBFloat16 ? "bfloat16" : dtype == at::kHalf ? "float16" : "float32";
}

// The device as this process sees it, with the CUDA_VISIBLE_DEVICES that mapped it.
std::string device_name(const at::Device& device) {
  std::string name = device.str();
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && device.is_cuda())
    name += std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")";
  return name;
}

// HTTP worker threads: each one waits on one generation, so the pool must take every request a
// client keeps in flight (the vLLM backend: --vllm-server-concurrency, 512 by default) and the
// engine could batch; fewer would cap the batch and queue requests behind idle keep-alive
// connections. The rest answer /health, /metrics and /pause while every generation waits.
int http_threads(int64_t max_running_requests) {
  constexpr int64_t kClientConcurrency = 512, kControlThreads = 16;
  return static_cast<int>(std::max(max_running_requests, kClientConcurrency) + kControlThreads);
}

}  // namespace

int run_serve(const Arguments& argv) {
  const auto& flags = core::flags::serve_flags();
  if (auto code = help_exit_code(argv, kUsage, flags)) return *code;
  Args parsed = core::flags::parse_with_train_defaults(argv, flags);
  const auto o = ServeCommandOptions::from(parsed);
  for (const auto& notice : o.notices) std::cerr << "vime serve: " << notice << "\n";
  parsed.set("hf_checkpoint", Json(o.hf_checkpoint), ArgSource::kCommandLine, "--hf-checkpoint");
  const Args args = loop::with_run_defaults(std::move(parsed));

  // SIGINT/SIGTERM go to sigwait below, not to the server's threads (started after this).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto tokenizer = loop::load_run_tokenizer(args);
  const auto source = loop::actor_source(args);
  const at::Device device = loop::run_device();
  if (!device.is_cuda() && !o.server.weight_transfer_config.is_null() &&
      o.server.weight_transfer_config.at("backend").as_string() == "nccl") {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::cerr
        << "vime serve: warning: --weight-transfer-config backend nccl, but no CUDA device is "
           "visible (CUDA_VISIBLE_DEVICES="
        << (visible ? visible : "unset")
        << "): the model runs on the CPU and /init_weight_transfer_engine will fail" << std::endl;
  }
  const at::ScalarType dtype = serve_dtype(o, args, source, device);
  if (o.gpu_memory_utilization && !device.is_cuda()) {
    std::cerr << "vime serve: --gpu-memory-utilization applies on CUDA only; on the CPU the KV "
                 "cache grows on demand (--rollout-kv-cache-bytes bounds it)"
              << std::endl;
  }
  auto model = ckpt::load_model(source, dtype, device);
  model->set_requires_grad(false);
  auto engine_options = loop::engine_options(args);
  if (o.seed) engine_options.seed = static_cast<uint64_t>(*o.seed);
  if (o.max_model_len) engine_options.max_context_len = *o.max_model_len;
  if (o.max_num_seqs) engine_options.max_running_requests = *o.max_num_seqs;
  if (o.max_num_batched_tokens) engine_options.max_prefill_tokens = *o.max_num_batched_tokens;
  if (o.logprob_mode) engine_options.logprob_mode = *o.logprob_mode;
  if (o.block_size) engine_options.kv_block_size = *o.block_size;
  if (o.enforce_eager) engine_options.cuda_graphs = false;
  if (o.gpu_memory_utilization && device.is_cuda())
    engine_options.gpu_memory_utilization = *o.gpu_memory_utilization;
  engine_options.gpu_memory_flag = "--gpu-memory-utilization";
  engine::NativeEngine engine(*model, tokenizer.get(), engine_options);
  serve::ServeOptions options = o.server;
  options.model_dir = source.is_hf ? source.dir.string() : o.hf_checkpoint;
  options.threads = http_threads(engine_options.max_running_requests);
  options.max_model_len = engine_options.max_context_len > 0
                              ? engine_options.max_context_len
                              : model->config().max_position_embeddings;
  serve::Server server(engine, *model, *tokenizer, options);
  server.start();
  // One line with what decides the speed, so a slow engine's log shows why.
  std::cout << "vime serve: " << source.dir.string() << " on " << device_name(device) << ", "
            << dtype_name(dtype) << ", up to " << engine_options.max_running_requests
            << " sequences per step, " << options.threads << " HTTP threads, at " << server.url()
            << std::endl;

  int signal = 0;
  sigwait(&signals, &signal);
  std::cout << "vime serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ", aborting in-flight requests and stopping" << std::endl;
  server.stop();
  return 0;
}

}  // namespace vime::app
