#include "vime/loop/rank_engines.hpp"

#include <cstdio>
#include <random>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "vime/error.hpp"
#include "vime/http/net.hpp"
#include "vime/json.hpp"

namespace vime::loop {
namespace {

std::string random_key() {
  std::random_device device;
  std::string key;
  for (int i = 0; i < 4; ++i) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(device()));
    key += hex;
  }
  return key;
}

serve::ServeOptions serve_options(const std::string& host, const std::string& api_key,
                                  int threads) {
  serve::ServeOptions o;
  o.host = http::is_loopback(host) ? "127.0.0.1" : "0.0.0.0";
  o.port = 0;
  o.api_key = api_key;
  o.threads = threads;
  return o;
}

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }

// "3", "0.2": a timeout as people write it.
std::string seconds(std::chrono::milliseconds ms) {
  const auto tenths = (ms.count() + 50) / 100;
  return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "");
}

}  // namespace

std::string rank_engine_key(int rank) { return "vime/engine/" + std::to_string(rank); }

std::string advertised_host(c10d::Store& store) {
  const auto* tcp = dynamic_cast<const c10d::TCPStore*>(&store);
  if (tcp == nullptr || http::is_loopback(tcp->getHost())) return "127.0.0.1";
  return http::local_address_toward(tcp->getHost());
}

RankEngineServer::RankEngineServer(engine::NativeEngine& engine, Model& model,
                                   const Tokenizer& tokenizer, c10d::Store& store, int rank,
                                   const std::string& host, int threads)
    : api_key_(random_key()),
      server_(engine, model, tokenizer, serve_options(host, api_key_, threads)) {
  const int port = server_.start();
  address_ = RankEngineAddress{rank, http::http_url(host, port), api_key_};
  const Json published = Json::Object{{"url", address_.url}, {"api_key", address_.api_key}};
  store.set(rank_engine_key(rank), bytes(published.dump()));
}

RankEngineServer::~RankEngineServer() { server_.stop(); }

std::vector<RankEngineAddress> wait_for_rank_engines(c10d::Store& store, int world_size,
                                                     std::chrono::milliseconds timeout,
                                                     int stride) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::vector<int> missing;
    for (int r = stride; r < world_size; r += stride) {
      if (!store.check({rank_engine_key(r)})) missing.push_back(r);
    }
    if (missing.empty()) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::string names;
      for (size_t i = 0; i < missing.size() && i < 16; ++i)
        names += (i ? ", " : "") + std::to_string(missing[i]);
      if (missing.size() > 16) names += ", ...";
      throw Error("rollout engines: " + std::to_string(missing.size()) + " of " +
                  std::to_string(world_size / stride - 1) +
                  " other ranks did not publish their engine (" + "under " +
                  rank_engine_key(missing.front()) + ") within " + seconds(timeout) +
                  " s (missing ranks: " + names +
                  "); see those ranks' logs, or raise --distributed-timeout-minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<RankEngineAddress> out;
  for (int r = stride; r < world_size; r += stride) {
    const auto raw = store.get(rank_engine_key(r));
    const std::string where = "the store's " + rank_engine_key(r);
    const Json value = Json::parse(std::string(raw.begin(), raw.end()), where);
    out.push_back(
        RankEngineAddress{r, value.at("url").as_string(), value.at("api_key").as_string()});
  }
  return out;
}

}  // namespace vime::loop
