// --rm-type remote_rm: POST {"prompt", "response", "label"} as JSON to --rm-url and return the JSON
// reply (slime rm_hub.remote_rm). A failed attempt (transport error, timeout, HTTP status >= 400,
// a reply that is not JSON) is retried after min(2^attempt, 30) + U(0, 1) seconds, 10 attempts in
// all; the last failure is raised. The timeout per attempt is 120 s (slime's aiohttp total).
// Tuning keys (from --custom-config-path, for tests and slow servers): remote_rm_max_retries,
// remote_rm_timeout_s, remote_rm_backoff_scale (multiplies every backoff).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>
#include <vime/hooks.hpp>
#include <vime/http_fetch.hpp>

namespace {

double config_double(const vime::Args& args, const char* key, double fallback) {
  if (!args.has(key) || !args.is_set(key)) return fallback;
  return args.get(key).as_double();
}

vime::Json reward(const vime::Args& args, const vime::Sample& sample) {
  if (!args.has("rm_url") || !args.is_set("rm_url")) {
    throw vime::UsageError("--rm-type remote_rm needs --rm-url (the reward service's URL)");
  }
  const std::string url = args.get_string("rm_url");
  const int max_retries = static_cast<int>(config_double(args, "remote_rm_max_retries", 10));
  const double timeout_s = config_double(args, "remote_rm_timeout_s", 120);
  const double backoff_scale = config_double(args, "remote_rm_backoff_scale", 1.0);

  vime::Json payload = vime::Json::object();
  payload["prompt"] = sample.prompt;
  payload["response"] = sample.response;
  payload["label"] = sample.label;
  vime::HttpRequest request = vime::HttpRequest::post_json(url, payload, timeout_s);
  request.connect_timeout_s = 0;  // the attempt's timeout covers connecting (aiohttp's total)

  thread_local std::mt19937 rng{std::random_device{}()};
  std::string last_error;
  for (int attempt = 0; attempt < std::max(1, max_retries); ++attempt) {
    const vime::HttpResponse response = vime::http_fetch(request);
    if (!response.error.empty() || response.status >= 400) {
      last_error = response.describe();
    } else {
      try {
        return vime::Json::parse(response.body, "the reply of " + url);
      } catch (const vime::Error& e) {
        last_error = e.what();
      }
    }
    if (attempt + 1 >= max_retries) break;
    double backoff = std::min(std::pow(2.0, attempt), 30.0) +
                     std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    backoff *= backoff_scale;
    std::fprintf(stderr, "remote_rm: %s, retrying in %.1fs (%d/%d)\n", last_error.c_str(), backoff,
                 attempt + 1, max_retries);
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
  }
  throw vime::Error("remote_rm: POST " + url + " failed after " + std::to_string(max_retries) +
                    " attempts: " + last_error);
}

}  // namespace

VIME_REWARD_PLUGIN(reward)
