// The RL control plane of vLLM's dev mode: /pause (mode=abort|wait|keep), /resume, /is_paused,
// /abort_requests (all), /reset_prefix_cache (the engine forgets its cached prompt prefixes) and
// /get_world_size
// (one engine).
#include <httplib.h>

#include "vime/serve/serve_context.hpp"

namespace vime::serve {
namespace {

void pause(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const std::string mode = req.has_param("mode") ? req.get_param_value("mode") : "abort";
  try {
    ctx.quiesce(mode, kHoldUser);
  } catch (const BadRequest& e) {
    send_json(res, Json::Object{{"error", e.what()}}, 400);  // /pause's own error shape
    return;
  }
  send_json(res, Json::Object{{"status", "paused"}});
}

}  // namespace

void add_control_routes(httplib::Server& http, ServeContext& ctx) {
  http.Post("/pause",
            [&ctx](const httplib::Request& req, httplib::Response& res) { pause(ctx, req, res); });
  http.Post("/resume", [&ctx](const httplib::Request&, httplib::Response& res) {
    ctx.release(kHoldUser);
    send_json(res, Json::Object{{"status", "resumed"}});
  });
  http.Get("/is_paused", [&ctx](const httplib::Request&, httplib::Response& res) {
    send_json(res, Json::Object{{"is_paused", ctx.held(kHoldUser)}});
  });
  // vLLM's reset_running_requests=true preempts running requests first; here running requests
  // keep their own blocks either way and only the shared prefix entries go.
  http.Post("/reset_prefix_cache", [&ctx](const httplib::Request&, httplib::Response& res) {
    ctx.engine.reset_prefix_cache();
    res.status = 200;
  });
  // vLLM's dev RLHF form: an empty or missing list aborts everything. The engine has no
  // per-request abort, so a list of ids is refused rather than ignored.
  http.Post("/abort_requests", [&ctx](const httplib::Request& req, httplib::Response& res) {
    const Json body = req.body.empty() ? Json::object() : parse_body(req);
    const Json* ids = body.find("request_ids");
    if (ids && !ids->is_null() && ids->size() > 0) {
      throw BadRequest("request_ids: vime serve aborts all requests only (send an empty list)");
    }
    const auto stats = ctx.engine.stats();
    ctx.engine.abort_all();
    send_json(res, Json::Object{{"status", "aborted"}, {"aborted", stats.running + stats.queued}});
  });
  http.Get("/get_world_size", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, Json::Object{{"world_size", 1}});
  });
}

}  // namespace vime::serve
