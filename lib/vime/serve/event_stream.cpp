#include "vime/serve/event_stream.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "vime/engine/engine_request.hpp"
#include "vime/serve/completion_output.hpp"

namespace vime::serve {
namespace {

// How long the writer waits for tokens before it lets httplib look at the connection again.
constexpr auto kPoll = std::chrono::milliseconds(20);

// What the engine's token hook appends, read by the writer; outlives the connection.
struct Progress {
  std::mutex mu;
  std::condition_variable grew;
  std::vector<int32_t> ids;
  std::vector<float> log_probs;
  bool last = false;
  std::atomic<bool> cancelled{false};  // the client went away: the hook aborts the request
  std::atomic<bool> counted{false};    // the request went into /metrics (once)
};

// httplib's content provider: writes the events of one request.
struct Stream {
  Stream(ServeContext& c, const GenerateRequest& request, StreamFormat f)
      : ctx(c), params(request.sampling_params), format(std::move(f)) {
    text = engine::TextStream::make(ctx.tokenizer, params.skip_special_tokens);
    for (const auto& s : params.stop) held = std::max(held, s.empty() ? 0 : s.size() - 1);
  }
  // A stream dropped after its request ended (last token in, or aborted) counts it here; one
  // dropped while the request runs is counted by the hook that aborts it.
  ~Stream() {
    if (progress->counted || !result.valid()) return;
    bool last;
    {
      std::lock_guard lock(progress->mu);
      last = progress->last;
    }
    if (!last && result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    try {
      GenerateResponse r = result.get();
      if (!progress->counted.exchange(true)) ctx.count(r);
    } catch (...) {  // a failed step: nothing to count
    }
  }

  bool write(httplib::DataSink& sink, const std::string& data);
  bool send(httplib::DataSink& sink, const Json& chunk) {
    return write(sink, "data: " + chunk.dump() + "\n\n");
  }
  bool provide(httplib::DataSink& sink);
  bool finish(httplib::DataSink& sink);

  ServeContext& ctx;
  const SamplingParams params;
  StreamFormat format;
  std::shared_ptr<Progress> progress = std::make_shared<Progress>();
  std::future<GenerateResponse> result;
  bool started = false;
  size_t taken = 0;  // ids fed to `text`; the pieces sent cover ids [0, taken)
  std::unique_ptr<engine::TextStream> text;
  std::string decoded;  // what `text` produced so far
  size_t sent = 0;      // bytes of `decoded` sent
  size_t held = 0;      // longest stop string - 1: a stop string may still complete there
};

bool Stream::write(httplib::DataSink& sink, const std::string& data) {
  if (sink.write(data.data(), data.size())) return true;
  progress->cancelled = true;
  return false;
}

// One call of httplib's chunked content provider: send what the engine added, waiting at most
// kPoll for it. Returning false drops the connection.
bool Stream::provide(httplib::DataSink& sink) {
  if (!started) {
    started = true;
    for (const auto& chunk : format.first)
      if (!send(sink, chunk)) return false;
    return true;
  }
  std::vector<int32_t> new_ids;
  std::vector<float> new_log_probs;
  bool ended;
  {
    Progress& p = *progress;
    std::unique_lock lock(p.mu);
    p.grew.wait_for(lock, kPoll, [&] { return p.ids.size() > taken || p.last; });
    const auto from = static_cast<std::ptrdiff_t>(taken);
    new_ids.assign(p.ids.begin() + from, p.ids.end());
    new_log_probs.assign(p.log_probs.begin() + from, p.log_probs.end());
    ended = p.last;
  }
  // An abort (or a failed step) ends the request without a last token.
  ended = ended || result.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  if (ended) return finish(sink);
  if (new_ids.empty()) return true;
  for (int32_t id : new_ids)
    if (auto piece = text->step(id)) decoded += *piece;
  size_t cut = decoded.size() > held ? decoded.size() - held : 0;
  while (cut > sent && (static_cast<unsigned char>(decoded[cut]) & 0xC0) == 0x80) --cut;
  cut = std::max(cut, sent);
  taken += new_ids.size();
  if (cut == sent && !format.every_token) return true;
  StreamPiece piece{decoded.substr(sent, cut - sent), new_ids, new_log_probs, nullptr};
  sent = cut;
  return send(sink, format.chunk(piece));
}

bool Stream::finish(httplib::DataSink& sink) {
  GenerateResponse r;
  try {
    r = result.get();
  } catch (const std::exception& e) {
    Json error = Json::Object{{"message", std::string(e.what())},
                              {"type", "InternalServerError"},
                              {"param", nullptr},
                              {"code", 500}};
    if (!send(sink, Json::Object{{"error", error}}) || !write(sink, "data: [DONE]\n\n")) {
      return false;
    }
    sink.done();
    return true;
  }
  if (!progress->counted.exchange(true)) ctx.count(r);
  // The text the non-streaming answer has; what was sent is its prefix (held back text aside).
  const std::string full = output_text(ctx, r, params);
  const std::string rest = full.compare(0, sent, decoded, 0, sent) == 0 && full.size() >= sent
                               ? full.substr(sent)
                               : std::string();
  const size_t from = std::min(taken, r.output_ids.size());
  std::span<const int32_t> ids_left(r.output_ids);
  std::span<const float> log_probs_left(r.output_log_probs);
  ids_left = ids_left.subspan(from);
  log_probs_left = log_probs_left.subspan(std::min(from, log_probs_left.size()));
  if (!send(sink, format.chunk(StreamPiece{rest, ids_left, log_probs_left, &r}))) return false;
  if (format.last) {
    for (const auto& chunk : format.last(r))
      if (!send(sink, chunk)) return false;
  }
  if (!write(sink, "data: [DONE]\n\n")) return false;
  sink.done();
  return true;
}

}  // namespace

void stream_generation(ServeContext& ctx, httplib::Response& res, const GenerateRequest& request,
                       StreamFormat format) {
  auto stream = std::make_shared<Stream>(ctx, request, std::move(format));
  const auto prompt_tokens = static_cast<int64_t>(request.input_ids.size());
  auto hook = [&ctx, progress = stream->progress, prompt_tokens](int32_t id, float log_prob,
                                                                 const char* finish_reason) {
    {
      std::lock_guard lock(progress->mu);
      progress->ids.push_back(id);
      progress->log_probs.push_back(log_prob);
      progress->last = finish_reason != nullptr;
      if (progress->cancelled) {  // the engine ends it with these tokens
        if (!progress->counted.exchange(true)) {
          GenerateResponse r;
          r.output_ids = progress->ids;
          r.finish_reason = finish_reason ? finish_reason : "abort";
          r.prompt_tokens = prompt_tokens;
          ctx.count(r);
        }
        return false;
      }
    }
    progress->grew.notify_one();
    return true;
  };
  stream->result = ctx.submit(request, std::move(hook));
  res.set_chunked_content_provider(
      "text/event-stream",
      [stream](size_t, httplib::DataSink& sink) { return stream->provide(sink); },
      [progress = stream->progress](bool success) {
        if (!success) progress->cancelled = true;
      });
}

}  // namespace vime::serve
