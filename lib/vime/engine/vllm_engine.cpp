#include "vime/engine/vllm_engine.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <random>

#include "vime/engine/vllm_protocol.hpp"
#include "vime/error.hpp"
#include "vime/http/client.hpp"

namespace vime::engine {
namespace {

using Clock = std::chrono::steady_clock;

// A URL generation goes to: one vLLM server, or the router.
struct Endpoint {
  explicit Endpoint(std::string u) : url(std::move(u)) {}
  std::string url;
  int64_t in_flight = 0;
  int64_t served = 0;
  int64_t failures = 0;
  bool use_completions = false;
  Clock::time_point avoid_until{};
};

struct Attempt {
  std::shared_ptr<Endpoint> endpoint;
  uint64_t epoch = 0;
};

std::string strip_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

uint64_t fnv1a(const std::string& a, const std::string& b) {
  uint64_t h = 1469598103934665603ull;
  for (const std::string* s : {&a, &b}) {
    for (unsigned char c : *s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  }
  return h;
}

GenerateResponse aborted() {
  GenerateResponse r;
  r.finish_reason = "abort";
  return r;
}

bool retryable_status(long status) { return status == 408 || status == 429 || status >= 500; }

std::string error_text(const http::Response& res) {
  if (!res.error.empty()) return res.error;
  std::string message;
  try {
    message = vllm_error_message(Json::parse(res.body));
  } catch (const Error&) {
  }
  return message.empty() ? res.describe() : "HTTP " + std::to_string(res.status) + ": " + message;
}

}  // namespace

struct VllmEngine::Impl {
  explicit Impl(VllmEngineOptions o) : options(std::move(o)) {
    if (options.concurrency_per_worker < 1) {
      throw UsageError("--vllm-server-concurrency must be at least 1, got " +
                       std::to_string(options.concurrency_per_worker));
    }
    const std::string& p = options.policy;
    if (p != "consistent_hash" && p != "round_robin" && p != "random" && p != "power_of_two" &&
        p != "cache_aware") {
      throw UsageError("--vllm-router-policy: unknown policy \"" + p +
                       "\" (random|round_robin|cache_aware|power_of_two|consistent_hash)");
    }
    if (!options.router_url.empty()) {
      router = std::make_shared<Endpoint>(strip_slash(options.router_url));
    }
    for (const auto& url : options.worker_urls) add_worker(url);
  }

  void add_worker(const std::string& raw) {
    const std::string url = strip_slash(raw);
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& w : workers) {
      if (w->url == url) return;
    }
    workers.push_back(std::make_shared<Endpoint>(url));
    changed.notify_all();
  }

  std::shared_ptr<Endpoint> pick(const GenerateRequest& request,
                                 const std::shared_ptr<Endpoint>& last_failed);
  http::Request http_request(const Endpoint& endpoint, const GenerateRequest& request) const;
  std::vector<std::string> worker_urls() const;
  // POST <url><path> on every worker at once; the responses in worker order.
  std::vector<std::pair<std::string, http::Response>> post_all(const std::string& path);
  void cancel_older(uint64_t epoch, const std::string& url);  // url empty: every endpoint
  size_t count_older(uint64_t epoch) const;

  VllmEngineOptions options;
  http::Client client;
  mutable std::mutex mutex;
  std::condition_variable changed;  // slots freed, workers added, epoch bumped, attempts ended
  std::shared_ptr<Endpoint> router;
  std::vector<std::shared_ptr<Endpoint>> workers;
  std::map<http::Client::Id, Attempt> attempts;
  uint64_t epoch = 0;  // bumped by abort_all() and pause("abort")
  int64_t waiting = 0;
  int64_t retries = 0;
  uint64_t round_robin = 0;
  std::mt19937_64 rng{0x5eed};
  std::string weight_version;
};

std::shared_ptr<Endpoint> VllmEngine::Impl::pick(const GenerateRequest& request,
                                                 const std::shared_ptr<Endpoint>& last_failed) {
  const int64_t cap = options.concurrency_per_worker;
  if (router) {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(workers.size()));
    return router->in_flight < cap * n ? router : nullptr;
  }
  std::vector<std::shared_ptr<Endpoint>> free;
  for (const auto& w : workers) {
    if (w->in_flight < cap) free.push_back(w);
  }
  if (free.empty()) return nullptr;
  // Keep away from the worker that just failed, and from recently failed ones, while others are
  // free.
  const auto now = Clock::now();
  auto keep_if = [&free](auto healthy) {
    std::vector<std::shared_ptr<Endpoint>> kept;
    std::copy_if(free.begin(), free.end(), std::back_inserter(kept), healthy);
    if (!kept.empty()) free.swap(kept);
  };
  keep_if([&](const auto& w) { return w != last_failed; });
  keep_if([&](const auto& w) { return w->avoid_until <= now; });

  auto least_loaded = [&] {
    return *std::min_element(free.begin(), free.end(), [](const auto& a, const auto& b) {
      return std::tie(a->in_flight, a->served) < std::tie(b->in_flight, b->served);
    });
  };
  const std::string& policy = options.policy;
  if (policy == "consistent_hash") {
    if (request.session_id.empty()) return least_loaded();
    // Rendezvous hashing over all workers: a session keeps its worker while the set changes.
    std::shared_ptr<Endpoint> owner;
    uint64_t best = 0;
    for (const auto& w : workers) {
      const uint64_t h = fnv1a(request.session_id, w->url);
      if (!owner || h > best) {
        owner = w;
        best = h;
      }
    }
    return std::find(free.begin(), free.end(), owner) != free.end() ? owner : least_loaded();
  }
  if (policy == "round_robin") return free[round_robin++ % free.size()];
  if (policy == "random") return free[rng() % free.size()];
  if (policy == "power_of_two") {
    const auto& a = free[rng() % free.size()];
    const auto& b = free[rng() % free.size()];
    return a->in_flight <= b->in_flight ? a : b;
  }
  return least_loaded();  // cache_aware: no prefix tree here; the least-loaded worker
}

http::Request VllmEngine::Impl::http_request(const Endpoint& endpoint,
                                             const GenerateRequest& request) const {
  const bool completions = endpoint.use_completions;
  const Json body = completions ? completions_body(request, options.model_name)
                                : generate_body(request, options.model_name);
  http::Request r = http::Request::post_json(
      endpoint.url + (completions ? "/v1/completions" : "/inference/v1/generate"), body,
      options.request_timeout_s);
  r.bearer(options.api_key);
  if (!request.session_id.empty()) r.header("x-session-id", request.session_id);
  return r;
}

std::vector<std::string> VllmEngine::Impl::worker_urls() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> urls;
  for (const auto& w : workers) urls.push_back(w->url);
  return urls;
}

std::vector<std::pair<std::string, http::Response>> VllmEngine::Impl::post_all(
    const std::string& path) {
  std::vector<std::pair<std::string, std::future<http::Response>>> pending;
  for (const auto& url : worker_urls()) {
    http::Request r =
        http::Request::post_json(url + path, Json::object(), options.control_timeout_s);
    r.bearer(options.api_key);
    pending.emplace_back(url, client.send(std::move(r)));
  }
  std::vector<std::pair<std::string, http::Response>> out;
  for (auto& [url, future] : pending) out.emplace_back(url, future.get());
  return out;
}

void VllmEngine::Impl::cancel_older(uint64_t current, const std::string& url) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [id, attempt] : attempts) {
    if (attempt.epoch < current && (url.empty() || attempt.endpoint->url == url)) {
      client.cancel(id);
    }
  }
}

size_t VllmEngine::Impl::count_older(uint64_t current) const {
  size_t n = 0;
  for (const auto& [id, attempt] : attempts) n += attempt.epoch < current;
  return n;
}

VllmEngine::VllmEngine(VllmEngineOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

VllmEngine::~VllmEngine() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    ++impl_->epoch;  // waiting callers return "abort"
    impl_->changed.notify_all();
  }
  impl_->client.cancel_all();
}

GenerateResponse VllmEngine::generate(const GenerateRequest& request) {
  if (request.input_ids.empty()) throw Error("VllmEngine: generate request with an empty prompt");
  Impl& s = *impl_;
  const auto deadline = Clock::now() + seconds(s.options.retry_deadline_s);
  double backoff = s.options.retry_backoff_s;
  std::shared_ptr<Endpoint> last_failed;
  std::string last_error;
  int tries = 0;
  std::unique_lock<std::mutex> lock(s.mutex);
  const uint64_t epoch = s.epoch;
  auto give_up = [&](const std::string& why) {
    std::string urls = s.router ? s.router->url : "";
    for (const auto& w : s.workers) urls += (urls.empty() ? "" : ", ") + w->url;
    return EnginesUnreachable(
        "VllmEngine: generate failed after " + std::to_string(tries) + " attempt(s) " +
        "within the " + std::to_string(static_cast<int>(s.options.retry_deadline_s)) +
        " s retry deadline (engines: " + (urls.empty() ? "none" : urls) + "): " + why);
  };
  for (;;) {
    std::shared_ptr<Endpoint> endpoint;
    ++s.waiting;
    const bool got = s.changed.wait_until(lock, deadline, [&] {
      return s.epoch != epoch || (endpoint = s.pick(request, last_failed)) != nullptr;
    });
    --s.waiting;
    if (s.epoch != epoch) return aborted();
    if (!got) {
      throw give_up(last_error.empty() ? "no vLLM worker had a free slot (add_worker?)"
                                       : "last error: " + last_error);
    }
    ++endpoint->in_flight;
    ++tries;
    const bool completions = endpoint->use_completions;
    auto promise = std::make_shared<std::promise<http::Response>>();
    std::future<http::Response> future = promise->get_future();
    const http::Client::Id id =
        s.client.submit(s.http_request(*endpoint, request),
                        [promise](http::Response r) { promise->set_value(std::move(r)); });
    s.attempts[id] = Attempt{endpoint, epoch};
    lock.unlock();
    const http::Response res = future.get();
    lock.lock();
    s.attempts.erase(id);
    --endpoint->in_flight;
    s.changed.notify_all();
    const bool abort_requested = s.epoch != epoch;
    const std::string url =
        endpoint->url + (completions ? "/v1/completions" : "/inference/v1/generate");

    if (res.cancelled || (abort_requested && !res.error.empty())) return aborted();
    if (res.status == 404 && !completions) {  // no token-in/token-out route: use completions
      endpoint->use_completions = true;
      continue;
    }
    std::string failure;
    if (!res.error.empty() || retryable_status(res.status)) {
      failure = error_text(res);
    } else if (!res.ok()) {
      throw Error("VllmEngine: POST " + url + ": " + error_text(res) +
                  " (the request was refused; not retried)");
    } else {
      GenerateResponse r = parse_generate_response(res.json("VllmEngine: " + url), url);
      ++endpoint->served;
      if (r.finish_reason == "error") {
        failure = "finish_reason \"error\"";
      } else if (r.finish_reason == "abort" && !abort_requested) {
        failure = "aborted by the engine (shutting down?) without an abort from vime";
      } else {
        if (r.weight_version.empty()) r.weight_version = s.weight_version;
        return r;
      }
    }
    // Retry the same request, elsewhere when there is another worker.
    ++s.retries;
    ++endpoint->failures;
    endpoint->avoid_until = Clock::now() + seconds(s.options.avoid_failed_worker_s);
    last_failed = endpoint;
    last_error = url + ": " + failure;
    if (Clock::now() + seconds(backoff) > deadline) throw give_up("last error: " + last_error);
    if (s.changed.wait_for(lock, seconds(backoff), [&] { return s.epoch != epoch; })) {
      return aborted();
    }
    backoff = std::min(backoff * 2, s.options.retry_backoff_max_s);
  }
}

void VllmEngine::abort_all() {
  Impl& s = *impl_;
  uint64_t current = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    current = ++s.epoch;
    s.changed.notify_all();
  }
  // Pause-abort every worker (in-flight requests answer "abort" with their partial tokens) and
  // resume it. A request that reached a worker after its pause runs on after the resume, so sweep
  // again while any remain; the last resort is closing their connections.
  constexpr int kSweeps = 3;
  for (int sweep = 0;; ++sweep) {
    if (sweep == kSweeps) {
      s.cancel_older(current, "");
    } else {
      const auto paused = s.post_all("/pause?mode=abort");
      bool any_paused = false;
      for (const auto& [url, res] : paused) {
        if (res.ok()) {
          any_paused = true;
        } else {
          s.cancel_older(current, url);  // no /pause (404) or unreachable: close its connections
        }
      }
      if (paused.empty()) s.cancel_older(current, "");  // router only: closing aborts upstream
      if (any_paused) s.post_all("/resume");
    }
    std::unique_lock<std::mutex> lock(s.mutex);
    if (s.changed.wait_for(lock, seconds(s.options.abort_sweep_s),
                           [&] { return s.count_older(current) == 0; })) {
      return;
    }
  }
}

void VllmEngine::pause(const std::string& mode) {
  if (mode != "abort" && mode != "wait" && mode != "keep") {
    throw Error("VllmEngine::pause: mode must be abort, wait or keep, got \"" + mode + "\"");
  }
  if (mode == "abort") {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    ++impl_->epoch;
    impl_->changed.notify_all();
  }
  for (const auto& [url, res] : impl_->post_all("/pause?mode=" + mode)) {
    if (!res.ok())
      throw Error("VllmEngine: POST " + url + "/pause?mode=" + mode + ": " + error_text(res) +
                  " (is VLLM_SERVER_DEV_MODE=1 set?)");
  }
}

void VllmEngine::resume() {
  for (const auto& [url, res] : impl_->post_all("/resume")) {
    if (!res.ok()) throw Error("VllmEngine: POST " + url + "/resume: " + error_text(res));
  }
}

void VllmEngine::add_worker(const std::string& url) { impl_->add_worker(url); }

void VllmEngine::remove_worker(const std::string& url) {
  const std::string u = strip_slash(url);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto& w = impl_->workers;
  w.erase(std::remove_if(w.begin(), w.end(), [&](const auto& e) { return e->url == u; }), w.end());
}

std::vector<std::string> VllmEngine::workers() const { return impl_->worker_urls(); }

void VllmEngine::set_weight_version(std::string version) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->weight_version = std::move(version);
}

VllmEngineStats VllmEngine::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  VllmEngineStats out;
  out.in_flight = static_cast<int64_t>(impl_->attempts.size());
  out.waiting = impl_->waiting;
  out.retries = impl_->retries;
  auto add = [&out](const Endpoint& e) {
    out.workers.push_back(
        VllmWorkerStats{e.url, e.in_flight, e.served, e.failures, e.use_completions});
  };
  if (impl_->router) add(*impl_->router);
  for (const auto& w : impl_->workers) add(*w);
  return out;
}

}  // namespace vime::engine
