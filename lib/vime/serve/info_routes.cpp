// GET /health, /v1/models, /version, /server_info, /metrics (Prometheus text under vLLM's metric
// names).
#include <httplib.h>

#include <ctime>
#include <sstream>

#include "vime/serve/serve_context.hpp"
#include "vime/version.hpp"

namespace vime::serve {
namespace {

std::string metrics_text(ServeContext& ctx) {
  const auto stats = ctx.engine.stats();
  const std::string labels = "model_name=\"" + ctx.options.model_name + "\",engine=\"0\"";
  std::ostringstream out;
  auto series = [&](const char* name, const char* type, const char* help) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  };
  series("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.");
  out << "vllm:num_requests_running{" << labels << "} " << stats.running << "\n";
  series("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
  out << "vllm:num_requests_waiting{" << labels << "} " << stats.queued << "\n";
  // vime's own: the mean decode batch is rows / steps (a server that serialises requests shows 1).
  series("vime:decode_steps_total", "counter", "Engine steps that only decoded.");
  out << "vime:decode_steps_total{" << labels << "} " << stats.decode_steps << "\n";
  series("vime:decode_rows_total", "counter", "Sequences decoded, summed over those steps.");
  out << "vime:decode_rows_total{" << labels << "} " << stats.decode_tokens << "\n";
  series("vllm:num_preemptions_total", "counter", "Cumulative number of preemptions.");
  out << "vllm:num_preemptions_total{" << labels << "} " << stats.preempted << "\n";
  series("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.");
  out << "vllm:kv_cache_usage_perc{" << labels << "} "
      << (stats.kv_blocks_total > 0 ? double(stats.kv_blocks_used) / double(stats.kv_blocks_total)
                                    : 0.0)
      << "\n";
  series("vllm:prefix_cache_hits_total", "counter",
         "Prefix cache hits, in terms of number of cached tokens.");
  out << "vllm:prefix_cache_hits_total{" << labels << "} " << stats.prefix_cached_tokens << "\n";
  {
    std::lock_guard<std::mutex> lock(ctx.weights_mutex);
    using State = ModelResidency::State;
    const State state = ctx.residency.state();
    const char* current = state == State::kOffloaded   ? "weights_offloaded"
                          : state == State::kDiscarded ? "discard_all"
                                                       : "awake";
    series("vllm:engine_sleep_state", "gauge", "Engine sleep state; 1 marks the current one.");
    for (const char* s : {"awake", "weights_offloaded", "discard_all"}) {
      out << "vllm:engine_sleep_state{" << labels << ",sleep_state=\"" << s << "\"} "
          << (std::string(s) == current ? 1 : 0) << "\n";
    }
  }
  std::lock_guard<std::mutex> lock(ctx.metrics_mutex);
  series("vllm:rl_weight_update_operations_total", "counter",
         "Number of weight updates and reloads that landed.");
  out << "vllm:rl_weight_update_operations_total{" << labels << "} " << ctx.weight_update_operations
      << "\n";
  series("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
  out << "vllm:prompt_tokens_total{" << labels << "} " << ctx.prompt_tokens_total << "\n";
  series("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.");
  out << "vllm:generation_tokens_total{" << labels << "} " << ctx.generation_tokens_total << "\n";
  series("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const char* reason : {"stop", "length", "abort"}) {
    auto it = ctx.finished_by_reason.find(reason);
    out << "vllm:request_success_total{" << labels << ",finished_reason=\"" << reason << "\"} "
        << (it == ctx.finished_by_reason.end() ? 0 : it->second) << "\n";
  }
  return out.str();
}

}  // namespace

void add_info_routes(httplib::Server& http, ServeContext& ctx) {
  http.Get("/health", [&ctx](const httplib::Request&, httplib::Response& res) {
    res.status = ctx.stopping ? 503 : 200;
  });
  http.Get("/v1/models", [&ctx](const httplib::Request&, httplib::Response& res) {
    const auto& name = ctx.options.model_name;
    Json model = Json::object();
    model["id"] = name;
    model["object"] = "model";
    model["created"] = static_cast<int64_t>(std::time(nullptr));
    model["owned_by"] = "vllm";
    model["root"] = name;
    model["parent"] = nullptr;
    model["max_model_len"] = ctx.options.max_model_len;
    model["permission"] = Json::array();
    send_json(res, Json::Object{{"object", "list"}, {"data", Json::Array{model}}});
  });
  http.Get("/version", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, Json::Object{{"version", VIME_VERSION}, {"server", "vime serve"}});
  });
  // vime checks an external engine's parallelism here; vime serve runs one GPU.
  // vLLM's ?config_format=json shape, the parts vime's launcher checks on external engines.
  http.Get("/server_info", [&ctx](const httplib::Request&, httplib::Response& res) {
    const Json parallel = Json::Object{
        {"tensor_parallel_size", 1}, {"pipeline_parallel_size", 1}, {"data_parallel_size", 1}};
    Json config =
        Json::Object{{"parallel_config", parallel},
                     {"model_config", Json::Object{{"model", ctx.options.model_dir},
                                                   {"served_model_name", ctx.options.model_name},
                                                   {"max_model_len", ctx.options.max_model_len}}}};
    if (!ctx.options.weight_transfer_config.is_null())
      config["weight_transfer_config"] = ctx.options.weight_transfer_config;
    send_json(res, Json::Object{{"vllm_config", std::move(config)}});
  });
  http.Get("/metrics", [&ctx](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_text(ctx), "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace vime::serve
