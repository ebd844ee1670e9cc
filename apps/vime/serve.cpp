// vime serve: a checkpoint behind vLLM's HTTP API (lib/vime/serve/server.hpp), for any OpenAI
// client or vime's own vLLM backend.
#include <ATen/ATen.h>
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/serve/server.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage = R"(usage: vime serve --hf-checkpoint DIR [--load CKPT] [flags]

Serves the model with vime's engine behind vLLM's HTTP API: /v1/completions,
/inference/v1/generate, /tokenize, /detokenize, /pause, /resume, /is_paused, /reset_prefix_cache,
/get_world_size, /health, /v1/models, /metrics. Ctrl-C or SIGTERM stops it (in-flight requests end
with finish_reason "abort").

  --host ADDR                 listen address (default 127.0.0.1)
  --port N                    listen port (default 8000; 0: any free port)
  --api-key KEY               require "Authorization: Bearer KEY" on every route but /health
  --served-model-name NAME    model id in /v1/models and responses (default: the --hf-checkpoint path)
  --help [GROUP]              all flags, or those of one group (engine flags as in `vime train`)
)";

// Takes the serve-only flags out of argv; the rest are slime's flags.
Arguments take_serve_flags(const Arguments& argv, serve::ServeOptions& o, bool& name_set) {
  Arguments rest;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= argv.size()) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--host") {
      o.host = value();
    } else if (a == "--port") {
      const std::string& v = value();
      try {
        size_t used = 0;
        o.port = std::stoi(v, &used);
        if (used != v.size() || o.port < 0 || o.port > 65535) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw UsageError("--port must be a port number in [0, 65535], got '" + v + "'");
      }
    } else if (a == "--api-key") {
      o.api_key = value();
    } else if (a == "--served-model-name") {
      o.model_name = value();
      name_set = true;
    } else {
      rest.push_back(a);
    }
  }
  return rest;
}

}  // namespace

int run_serve(const Arguments& argv) {
  if (print_flags_help_if_asked(argv, kUsage)) return 0;
  serve::ServeOptions options;
  bool name_set = false;
  const Args args =
      loop::with_run_defaults(core::parse_args(take_serve_flags(argv, options, name_set)));
  if (!args.is_set("hf_checkpoint")) throw UsageError("vime serve needs --hf-checkpoint DIR");

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
  const auto engine_options = loop::engine_options(args);
  engine::NativeEngine engine(*model, tokenizer.get(), engine_options);
  if (!name_set) options.model_name = args.get_string("hf_checkpoint");
  options.max_model_len = engine_options.max_context_len > 0
                              ? engine_options.max_context_len
                              : model->config().max_position_embeddings;
  serve::Server server(engine, *tokenizer, options);
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
