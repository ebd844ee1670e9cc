// `vime serve`'s sleep mode and weight transfer over real HTTP on 127.0.0.1: a Server around a
// NativeEngine on its own tiny CPU model (these tests change its weights). Sleep levels 1 and 2
// must give back the same greedy output after waking; a disk weight update must give what a
// NativeEngine on the new weights gives; a bad directory must leave the old weights serving.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "engine/engine_fixtures.hpp"
#include "support/test_support.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/json.hpp"
#include "vime/serve/server.hpp"

using vime::Json;
using vime::engine::NativeEngine;
namespace fs = std::filesystem;

namespace {

const vime::Tokenizer& qwen() { return vime::test::real_tokenizer("qwen3"); }

// A model of its own saved as the served HF dir, its engine and a server on a free port.
struct WeightServed {
  explicit WeightServed(bool sleep_mode = true, Json transfer = Json::Object{{"backend", "disk"}})
      : model(vime::test::tiny_engine_model(at::kFloat, at::kCPU)),
        saved((vime::ckpt::save_hf_model(*model, dir.path() / "served"), true)),
        engine(*model, &qwen(), {}),
        server(engine, *model, qwen(), options(sleep_mode, std::move(transfer))) {
    port = server.start();
  }
  vime::serve::ServeOptions options(bool sleep_mode, Json transfer) const {
    vime::serve::ServeOptions o;
    o.port = 0;
    o.model_name = "tiny-qwen3";
    o.max_model_len = 1024;
    o.enable_sleep_mode = sleep_mode;
    o.weight_transfer_config = std::move(transfer);
    o.model_dir = (dir.path() / "served").string();
    return o;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    return c;
  }
  vime::test::TempDir dir;
  std::unique_ptr<vime::Model> model;
  bool saved;
  NativeEngine engine;
  vime::serve::Server server;
  int port = 0;
};

// POSTs `body` (a JSON text; "" sends none) and checks the status; returns the body text.
std::string post(const WeightServed& s, const std::string& path, const std::string& body,
                 int expect = 200) {
  auto res = s.client().Post(path.c_str(), body, "application/json");
  REQUIRE(res);
  CAPTURE(path, body, res->body);
  REQUIRE(res->status == expect);
  return res->body;
}

Json post_json(const WeightServed& s, const std::string& path, const Json& body, int expect = 200) {
  return Json::parse(post(s, path, body.dump(), expect));
}

Json get(const WeightServed& s, const std::string& path) {
  auto res = s.client().Get(path.c_str());
  REQUIRE(res);
  CAPTURE(path, res->body);
  REQUIRE(res->status == 200);
  return Json::parse(res->body);
}

std::string metrics(const WeightServed& s) {
  auto res = s.client().Get("/metrics");
  REQUIRE(res);
  return res->body;
}

const std::vector<int32_t>& prompt() {
  static const auto ids = qwen().encode("The capital of France is");
  return ids;
}

Json generate_body() {
  return Json::Object{{"token_ids", prompt()},
                      {"sampling_params", Json::Object{{"max_tokens", 8}, {"temperature", 0.0}}}};
}

// The greedy tokens of /inference/v1/generate, and the whole response.
std::vector<int32_t> greedy(const WeightServed& s, Json* response = nullptr) {
  const Json r = post_json(s, "/inference/v1/generate", generate_body());
  std::vector<int32_t> ids;
  for (const auto& v : r.at("choices").at(size_t{0}).at("token_ids").as_array())
    ids.push_back(static_cast<int32_t>(v.as_int()));
  REQUIRE(ids.size() == 8);
  if (response) *response = r;
  return ids;
}

bool sleeping(const WeightServed& s) { return get(s, "/is_sleeping").at("is_sleeping").as_bool(); }

std::string sleep_state_line(const std::string& state) {
  return "vllm:engine_sleep_state{model_name=\"tiny-qwen3\",engine=\"0\",sleep_state=\"" + state +
         "\"} 1";
}

std::string error_message(const std::string& body) {
  return Json::parse(body).at("error").at("message").as_string();
}

}  // namespace

TEST_CASE("serve: sleep level 1 frees the weights, holds requests, wakes bit-identical",
          "[serve]") {
  WeightServed s;
  const auto before = greedy(s);
  const at::Tensor embed_before = s.model->named_parameters()[0].second.clone();
  CHECK(!sleeping(s));
  CHECK(metrics(s).find(sleep_state_line("awake")) != std::string::npos);

  post(s, "/sleep?level=1", "");
  CHECK(sleeping(s));
  CHECK(s.model->named_parameters()[0].second.numel() == 0);  // device storage let go
  CHECK(metrics(s).find(sleep_state_line("weights_offloaded")) != std::string::npos);

  // A request that arrives while asleep is held, not failed, and runs after waking.
  // (The thread only talks HTTP: Catch's macros are not thread-safe.)
  auto held = std::async(std::launch::async, [&s] {
    return s.client().Post("/inference/v1/generate", generate_body().dump(), "application/json");
  });
  CHECK(held.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
  post(s, "/wake_up", "");
  CHECK(!sleeping(s));
  const httplib::Result res = held.get();
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const Json held_reply = Json::parse(res->body);  // named: a range-for would not keep it alive
  std::vector<int32_t> held_ids;
  for (const auto& v : held_reply.at("choices").at(size_t{0}).at("token_ids").as_array())
    held_ids.push_back(static_cast<int32_t>(v.as_int()));
  CHECK(held_ids == before);
  CHECK(at::equal(s.model->named_parameters()[0].second, embed_before));
  CHECK(greedy(s) == before);
  CHECK(metrics(s).find(sleep_state_line("awake")) != std::string::npos);
}

TEST_CASE("serve: sleep level 2, wake weights, reload_weights, wake kv_cache: same output",
          "[serve]") {
  WeightServed s;
  const auto before = greedy(s);
  post(s, "/sleep?level=2&mode=wait", "");
  CHECK(metrics(s).find(sleep_state_line("discard_all")) != std::string::npos);
  const Json reload = Json::Object{{"method", "reload_weights"}};
  // Nothing to load into yet.
  CHECK_THAT(error_message(post(s, "/collective_rpc", reload.dump(), 400)),
             Catch::Contains("wake_up?tags=weights"));
  post(s, "/wake_up?tags=weights", "");
  CHECK(sleeping(s));                                      // the KV cache still sleeps
  const Json r = post_json(s, "/collective_rpc", reload);  // no weights_path: the served dir
  CHECK(r.dump() == R"({"results":[null]})");
  post(s, "/wake_up?tags=kv_cache", "");
  CHECK(!sleeping(s));
  CHECK(greedy(s) == before);
  CHECK(metrics(s).find("vllm:rl_weight_update_operations_total{model_name=\"tiny-qwen3\","
                        "engine=\"0\"} 1") != std::string::npos);
}

TEST_CASE(
    "serve: level 0 only pauses; sleep routes refuse without --enable-sleep-mode and bad "
    "arguments",
    "[serve]") {
  WeightServed s;
  const auto before = greedy(s);
  post(s, "/sleep?level=0", "");
  CHECK(sleeping(s));
  CHECK(s.model->named_parameters()[0].second.numel() > 0);
  post(s, "/wake_up", "");
  CHECK(!sleeping(s));
  CHECK(greedy(s) == before);
  CHECK_THAT(error_message(post(s, "/sleep?level=3", "", 400)), Catch::Contains("level"));
  CHECK_THAT(error_message(post(s, "/sleep?level=1&mode=later", "", 400)), Catch::Contains("mode"));
  CHECK_THAT(error_message(post(s, "/wake_up?tags=cuda_graph", "", 400)),
             Catch::Contains("cuda_graph"));
  CHECK(!sleeping(s));

  WeightServed off(false);
  CHECK_THAT(error_message(post(off, "/sleep?level=1", "", 400)),
             Catch::Contains("--enable-sleep-mode"));
  CHECK_THAT(error_message(post(off, "/wake_up", "", 400)), Catch::Contains("--enable-sleep-mode"));
  CHECK(greedy(off) == before);
}

TEST_CASE("serve: disk weight update lands new weights; the version rides on responses",
          "[serve]") {
  WeightServed s;
  const auto before = greedy(s);
  auto other = vime::test::tiny_engine_model(at::kFloat, at::kCPU, 1024, /*seed=*/8);
  const fs::path new_dir = s.dir.path() / "step17";
  vime::ckpt::save_hf_model(*other, new_dir);
  std::vector<int32_t> expected;
  {
    NativeEngine reference(*other, &qwen(), {});
    expected = reference.generate(vime::test::make_request(prompt(), 8)).output_ids;
  }
  REQUIRE(expected != before);  // else the test could not tell the weights apart
  const Json update = Json::Object{{"update_info", Json::Object{{"path", new_dir.string()}}}};

  CHECK(get(s, "/weight_info").at("weight_version").is_null());
  CHECK_THAT(error_message(post(s, "/update_weights", update.dump(), 400)),
             Catch::Contains("/init_weight_transfer_engine"));
  CHECK_THAT(error_message(post(s, "/start_weight_update", "{}", 400)),
             Catch::Contains("/init_weight_transfer_engine"));
  CHECK(post_json(s, "/init_weight_transfer_engine", Json::Object{{"init_info", Json::object()}})
            .at("message")
            .as_string() == "Weight transfer initialized");
  CHECK_THAT(error_message(post(s, "/update_weights", update.dump(), 400)),
             Catch::Contains("/start_weight_update"));
  CHECK_THAT(error_message(post(s, "/finish_weight_update", "{}", 400)),
             Catch::Contains("/start_weight_update"));
  CHECK(post_json(s, "/start_weight_update", Json::object()).at("message").as_string() ==
        "Weight update started");
  CHECK(greedy(s) == before);  // started, nothing landed yet
  CHECK(post_json(s, "/update_weights", update).at("message").as_string() == "Weights updated");
  CHECK(post_json(s, "/update_weights", update).at("message").as_string() == "Weights updated");
  CHECK(post_json(s, "/finish_weight_update", Json::Object{{"weight_version", "17"}})
            .at("message")
            .as_string() == "Weight update finished");

  Json response;
  CHECK(greedy(s, &response) == expected);
  CHECK(response.at("weight_version").as_string() == "17");
  CHECK(get(s, "/weight_info").at("weight_version").as_string() == "17");
  const Json completion =
      post_json(s, "/v1/completions",
                Json::Object{{"prompt", prompt()}, {"max_tokens", 2}, {"temperature", 0.0}});
  CHECK(completion.at("weight_version").as_string() == "17");
  CHECK(metrics(s).find("vllm:rl_weight_update_operations_total{model_name=\"tiny-qwen3\","
                        "engine=\"0\"} 2") != std::string::npos);

  post_json(s, "/update_weight_version", Json::Object{{"new_version", "18"}});
  CHECK(get(s, "/weight_info").at("weight_version").as_string() == "18");
  // Back to the served dir through vime's disk sync.
  post_json(
      s, "/collective_rpc",
      Json::Object{{"method", "reload_weights"},
                   {"kwargs", Json::Object{{"weights_path", s.options(true, nullptr).model_dir},
                                           {"is_checkpoint_format", true}}}});
  CHECK(greedy(s) == before);
}

TEST_CASE("serve: a bad weights dir is refused with the old weights still serving", "[serve]") {
  WeightServed s;
  const auto before = greedy(s);
  const fs::path served = s.dir.path() / "served";
  // A directory that lacks one tensor.
  auto tensors = vime::ckpt::read_safetensors_dir(served);
  for (auto& t : tensors) t.second = t.second.clone();  // off the mapping before rewriting
  const std::string dropped = tensors.back().first;
  tensors.pop_back();
  // Mangle the first tensors so that a half-done copy would change the output.
  for (size_t i = 0; i + 1 < tensors.size(); ++i) tensors[i].second.mul_(-3.0);
  vime::ckpt::write_safetensors_dir(s.dir.path() / "missing", tensors);
  // A truncated file.
  fs::create_directories(s.dir.path() / "truncated");
  fs::copy_file(served / "model.safetensors", s.dir.path() / "truncated" / "model.safetensors");
  fs::resize_file(s.dir.path() / "truncated" / "model.safetensors", 4096);

  post_json(s, "/init_weight_transfer_engine", Json::Object{{"init_info", Json::object()}});
  post_json(s, "/start_weight_update", Json::object());
  auto update = [&](const fs::path& dir) {
    return Json::Object{{"update_info", Json::Object{{"path", dir.string()}}}};
  };
  CHECK_THAT(
      error_message(post(s, "/update_weights", Json(update(s.dir.path() / "missing")).dump(), 400)),
      Catch::Contains(dropped));
  CHECK(error_message(
            post(s, "/update_weights", Json(update(s.dir.path() / "truncated")).dump(), 400))
            .find("truncated") != std::string::npos);
  CHECK_THAT(
      error_message(post(s, "/update_weights", Json(update(s.dir.path() / "none")).dump(), 400)),
      Catch::Contains("none"));
  CHECK(greedy(s) == before);  // the engine runs again, on the old weights
  const Json rpc =
      Json::Object{{"method", "reload_weights"},
                   {"kwargs", Json::Object{{"weights_path", (s.dir.path() / "missing").string()}}}};
  CHECK_THAT(error_message(post(s, "/collective_rpc", rpc.dump(), 400)), Catch::Contains(dropped));
  CHECK(greedy(s) == before);
  CHECK(metrics(s).find("vllm:rl_weight_update_operations_total{model_name=\"tiny-qwen3\","
                        "engine=\"0\"} 0") != std::string::npos);
}

TEST_CASE("serve: weight routes refuse bad bodies, unknown rpc methods and a missing config",
          "[serve]") {
  WeightServed s;
  CHECK_THAT(error_message(post(s, "/init_weight_transfer_engine", "{}", 400)),
             Catch::Contains("init_info"));
  CHECK_THAT(error_message(post(s, "/init_weight_transfer_engine", "not json", 400)),
             Catch::Contains("JSON"));
  post_json(s, "/init_weight_transfer_engine", Json::Object{{"init_info", Json::object()}});
  post_json(s, "/start_weight_update", Json::object());
  CHECK_THAT(error_message(post(s, "/update_weights", R"({"update_info":{}})", 400)),
             Catch::Contains("path"));
  CHECK_THAT(error_message(post(s, "/update_weights", R"({"names":[]})", 400)),
             Catch::Contains("update_info"));
  CHECK_THAT(error_message(post(s, "/collective_rpc", R"({"method":"init_device"})", 400)),
             Catch::Contains("init_device"));
  CHECK_THAT(error_message(post(s, "/collective_rpc", R"({"args":[]})", 400)),
             Catch::Contains("method"));
  CHECK_THAT(error_message(post(s, "/update_weight_version", "{}", 400)),
             Catch::Contains("new_version"));

  WeightServed off(true, nullptr);
  CHECK_THAT(error_message(post(off, "/init_weight_transfer_engine", R"({"init_info":{}})", 400)),
             Catch::Contains("--weight-transfer-config"));
  CHECK_THAT(error_message(post(off, "/update_weights", R"({"update_info":{}})", 400)),
             Catch::Contains("--weight-transfer-config"));
  // vime's disk sync needs no weight-transfer config.
  CHECK(post_json(off, "/collective_rpc", Json::Object{{"method", "reload_weights"}}).dump() ==
        R"({"results":[null]})");

  // The NCCL backend's receiver comes from weight_sync; whatever it refuses is an error answer
  // naming the backend (a disk sender then falls back to /collective_rpc), not a dead server.
  WeightServed nccl(true, Json::Object{{"backend", "nccl"}});
  auto res =
      nccl.client().Post("/init_weight_transfer_engine", R"({"init_info":{}})", "application/json");
  REQUIRE(res);
  CHECK((res->status == 400 || res->status == 500));
  CHECK_THAT(error_message(res->body), Catch::Contains("nccl") || Catch::Contains("init_info"));
  CHECK(post_json(nccl, "/collective_rpc", Json::Object{{"method", "reload_weights"}}).dump() ==
        R"({"results":[null]})");

  // /version and /server_info as vime's launcher reads them.
  CHECK(get(s, "/version").at("version").is_string());
  const Json parallel =
      get(s, "/server_info?config_format=json").at("vllm_config").at("parallel_config");
  CHECK(parallel.at("tensor_parallel_size").as_int() == 1);
  CHECK(parallel.at("pipeline_parallel_size").as_int() == 1);
  CHECK(parallel.at("data_parallel_size").as_int() == 1);
}
