// Weight transfer into the served model (vLLM's weight-transfer API), with the backend of
// --weight-transfer-config: POST /init_weight_transfer_engine, /start_weight_update,
// /update_weights (any number of times), /finish_weight_update; /update_weight_version and
// GET /weight_info; and POST /collective_rpc {"method": "reload_weights"} (vime's disk sync). The
// engine is held while tensors land; each route answers after they have.
#include <httplib.h>

#include "vime/serve/disk_weight_receiver.hpp"
#include "vime/serve/serve_context.hpp"
#include "vime/weight_sync/nccl_weight_receiver.hpp"

namespace vime::serve {
namespace {

void require_transfer_config(const ServeContext& ctx) {
  if (ctx.options.weight_transfer_config.is_null()) {
    throw BadRequest(
        "weight transfer is off: start vime serve with --weight-transfer-config "
        "'{\"backend\":\"disk\"}' (or \"nccl\")");
  }
}

void require_weights_awake(const ServeContext& ctx) {
  if (ctx.residency.state() != ModelResidency::State::kResident) {
    throw BadRequest("the weights are asleep: POST /wake_up?tags=weights first");
  }
}

// A body that may be empty; when present it must be a JSON object.
Json optional_body(const httplib::Request& req) {
  return req.body.empty() ? Json::object() : parse_body(req);
}

const Json& object_field(const Json& body, const char* key) {
  const Json* v = body.find(key);
  if (!v || !v->is_object()) throw BadRequest(std::string(key) + " (an object) is required");
  return *v;
}

// "17" or 17 as the string vLLM keeps.
std::string version_string(const Json& v, const char* key) {
  if (v.is_string()) return v.as_string();
  if (v.is_int()) return std::to_string(v.as_int());
  throw BadRequest(std::string(key) + " must be a string");
}

void message(httplib::Response& res, const char* text) {
  send_json(res, Json::Object{{"message", text}});
}

// Runs `load` with the engine held and counts it for /metrics.
template <class F>
void land_weights(ServeContext& ctx, F load) {
  require_weights_awake(ctx);
  ctx.hold(kHoldWeights);
  try {
    load();
  } catch (...) {
    ctx.release(kHoldWeights);
    throw;
  }
  ctx.release(kHoldWeights);
  std::lock_guard<std::mutex> lock(ctx.metrics_mutex);
  ++ctx.weight_update_operations;
}

void init(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  require_transfer_config(ctx);
  const Json body = parse_body(req);
  const Json& init_info = object_field(body, "init_info");
  const std::string backend = ctx.options.weight_transfer_config.at("backend").as_string();
  std::lock_guard<std::mutex> lock(ctx.weights_mutex);
  std::unique_ptr<weight_sync::WeightReceiver> receiver;
  if (backend == "disk") {
    receiver = std::make_unique<DiskWeightReceiver>();
  } else {
    try {
      receiver = weight_sync::make_nccl_weight_receiver(ctx.options.weight_transfer_config);
    } catch (const Error& e) {
      send_error(res, 500, std::string("weight transfer backend ") + backend + ": " + e.what());
      return;
    }
  }
  try {
    receiver->init(init_info);
  } catch (const Error& e) {
    throw BadRequest(std::string("init_info: ") + e.what());
  }
  ctx.receiver = std::move(receiver);
  ctx.update_started = false;
  message(res, "Weight transfer initialized");
}

void start(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  require_transfer_config(ctx);
  optional_body(req);  // vLLM's fields (is_checkpoint_format, include_draft) change nothing here
  std::lock_guard<std::mutex> lock(ctx.weights_mutex);
  if (!ctx.receiver)
    throw BadRequest("no weight transfer: POST /init_weight_transfer_engine first");
  ctx.update_started = true;
  message(res, "Weight update started");
}

void update(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  require_transfer_config(ctx);
  const Json body = parse_body(req);
  const Json& update_info = object_field(body, "update_info");
  std::lock_guard<std::mutex> lock(ctx.weights_mutex);
  if (!ctx.receiver)
    throw BadRequest("no weight transfer: POST /init_weight_transfer_engine first");
  if (!ctx.update_started)
    throw BadRequest("no weight update started: POST /start_weight_update first");
  land_weights(ctx, [&] { ctx.receiver->update(update_info, ctx.model); });
  message(res, "Weights updated");
}

void finish(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  require_transfer_config(ctx);
  const Json body = optional_body(req);
  std::lock_guard<std::mutex> lock(ctx.weights_mutex);
  if (!ctx.update_started)
    throw BadRequest("no weight update started: POST /start_weight_update first");
  if (const Json* v = body.find("weight_version"); v && !v->is_null()) {
    ctx.set_weight_version(version_string(*v, "weight_version"));
  }
  ctx.update_started = false;
  message(res, "Weight update finished");
}

void collective_rpc(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_body(req);
  const Json* method = body.find("method");
  if (!method || !method->is_string()) throw BadRequest("method (a string) is required");
  if (method->as_string() != "reload_weights") {
    throw BadRequest("collective_rpc: method '" + method->as_string() +
                     "' is not supported by vime serve (only reload_weights)");
  }
  std::string path = ctx.options.model_dir;
  if (const Json* kwargs = body.find("kwargs"); kwargs && !kwargs->is_null()) {
    if (!kwargs->is_object()) throw BadRequest("kwargs must be an object");
    if (const Json* p = kwargs->find("weights_path"); p && !p->is_null()) {
      if (!p->is_string()) throw BadRequest("kwargs.weights_path must be a string");
      path = p->as_string();
    }
    if (const Json* f = kwargs->find("is_checkpoint_format"); f && f->is_bool() && !f->as_bool()) {
      throw BadRequest("kwargs.is_checkpoint_format: vime serve loads HF checkpoints only (true)");
    }
  }
  if (path.empty()) throw BadRequest("kwargs.weights_path is required (no served model dir)");
  std::lock_guard<std::mutex> lock(ctx.weights_mutex);
  land_weights(ctx, [&] { load_hf_weights(path, ctx.model); });
  send_json(res, Json::Object{{"results", Json::Array{nullptr}}});
}

}  // namespace

void add_weight_routes(httplib::Server& http, ServeContext& ctx) {
  using Handler = void (*)(ServeContext&, const httplib::Request&, httplib::Response&);
  auto post = [&](const char* path, Handler handler) {
    http.Post(path, [&ctx, handler](const httplib::Request& req, httplib::Response& res) {
      handler(ctx, req, res);
    });
  };
  post("/init_weight_transfer_engine", init);
  post("/start_weight_update", start);
  post("/update_weights", update);
  post("/finish_weight_update", finish);
  post("/collective_rpc", collective_rpc);
  http.Post("/update_weight_version", [&ctx](const httplib::Request& req, httplib::Response& res) {
    const Json body = parse_body(req);
    const Json* v = body.find("new_version");
    if (!v || v->is_null()) throw BadRequest("new_version is required");
    const std::string version = version_string(*v, "new_version");
    ctx.set_weight_version(version);
    send_json(res,
              Json::Object{{"message", "Weight version updated"}, {"weight_version", version}});
  });
  http.Get("/weight_info", [&ctx](const httplib::Request&, httplib::Response& res) {
    send_json(res, Json::Object{{"weight_version", ctx.weight_version_json()}});
  });
}

}  // namespace vime::serve
