// vLLM's sleep mode (--enable-sleep-mode): POST /sleep?level=0|1|2
// (&mode=abort|wait|keep, &tags=weights|kv_cache), POST /wake_up (?tags=...), GET /is_sleeping.
// Level 0 only holds the engine; 1 frees the KV cache and moves the weights to host memory; 2 frees
// both (the weights must be loaded again after /wake_up?tags=weights). Generation requests that
// arrive while asleep are held, not failed; they run once every tag is awake.
#include <httplib.h>

#include <set>

#include "vime/serve/serve_context.hpp"

namespace vime::serve {
namespace {

void require_sleep_mode(const ServeContext& ctx) {
  if (!ctx.options.enable_sleep_mode) {
    throw BadRequest(
        "sleep mode is off: start vime serve with --enable-sleep-mode to use /sleep "
        "and /wake_up");
  }
}

// ?tags=weights&tags=kv_cache; none given: both.
std::set<std::string> tags_of(const httplib::Request& req) {
  std::set<std::string> tags;
  for (size_t i = 0; i < req.get_param_value_count("tags"); ++i) {
    const std::string tag = req.get_param_value("tags", i);
    if (tag != "weights" && tag != "kv_cache") {
      throw BadRequest("tags: unknown tag '" + tag + "'; use weights and/or kv_cache");
    }
    tags.insert(tag);
  }
  if (tags.empty()) tags = {"weights", "kv_cache"};
  return tags;
}

int level_of(const httplib::Request& req) {
  if (!req.has_param("level")) return 1;  // vLLM's default
  const std::string level = req.get_param_value("level");
  if (level != "0" && level != "1" && level != "2") {
    throw BadRequest("level must be 0, 1 or 2, got '" + level + "'");
  }
  return level[0] - '0';
}

void sleep(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  require_sleep_mode(ctx);
  const int level = level_of(req);
  const auto tags = tags_of(req);
  const std::string mode = req.has_param("mode") ? req.get_param_value("mode") : "abort";
  std::lock_guard<std::mutex> lock(ctx.weights_mutex);
  ctx.quiesce(mode, kHoldSleep);
  if (level == 0) {
    ctx.sleep_level0 = true;
  } else {
    if (tags.count("kv_cache")) {
      ctx.engine.release_memory();  // held requests are prefilled again after waking
      ctx.kv_asleep = true;
    }
    if (tags.count("weights")) {
      if (level == 1) {
        ctx.residency.offload();
      } else {
        ctx.residency.discard();
      }
    }
  }
  res.status = 200;
}

void wake_up(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  require_sleep_mode(ctx);
  const auto tags = tags_of(req);
  std::lock_guard<std::mutex> lock(ctx.weights_mutex);
  if (tags.count("weights")) ctx.residency.restore();
  if (tags.count("kv_cache")) ctx.kv_asleep = false;  // the cache grows again on demand
  ctx.sleep_level0 = false;
  if (!ctx.is_sleeping()) ctx.release(kHoldSleep);
  res.status = 200;
}

}  // namespace

void add_sleep_routes(httplib::Server& http, ServeContext& ctx) {
  http.Post("/sleep",
            [&ctx](const httplib::Request& req, httplib::Response& res) { sleep(ctx, req, res); });
  http.Post("/wake_up", [&ctx](const httplib::Request& req, httplib::Response& res) {
    wake_up(ctx, req, res);
  });
  http.Get("/is_sleeping", [&ctx](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(ctx.weights_mutex);
    send_json(res, Json::Object{{"is_sleeping", ctx.is_sleeping()}});
  });
}

}  // namespace vime::serve
