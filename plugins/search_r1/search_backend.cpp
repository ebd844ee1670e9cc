#include "search_backend.hpp"

#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "vime/bm25_retriever.hpp"
#include "vime/error.hpp"
#include "vime/http_fetch.hpp"

namespace search_r1 {
namespace {

constexpr const char* kNoContent = "\"No title.\"\nNo snippet available.";

// slime's SEMAPHORE: one per process, sized by the first call's search_concurrency.
class Semaphore {
 public:
  explicit Semaphore(int64_t permits) : permits_(permits) {}
  void acquire() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return permits_ > 0; });
    --permits_;
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      ++permits_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int64_t permits_;
};

Semaphore& search_slots(int64_t permits) {
  static Semaphore slots(permits);
  return slots;
}

// In-process indexes, one per (corpus, index dir, k1, b), opened on first use and kept.
const vime::Bm25Retriever& in_process_index(const SearchConfig& c) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<vime::Bm25Retriever>> indexes;
  const std::string key = c.search_corpus + '\n' + c.search_index + '\n' +
                          std::to_string(c.bm25_k1) + '\n' + std::to_string(c.bm25_b);
  std::lock_guard lock(mutex);
  auto& slot = indexes[key];
  if (!slot) {
    slot = std::make_unique<vime::Bm25Retriever>(
        vime::Bm25Retriever::Source{c.search_corpus, c.search_index, c.bm25_k1, c.bm25_b});
    std::fprintf(stderr, "search_r1: BM25 index %s\n", slot->how_opened().c_str());
  }
  return *slot;
}

std::vector<std::string> http_search(const SearchConfig& c, const std::string& query) {
  vime::Json payload = vime::Json::object();
  payload["queries"] = vime::Json::Array{vime::Json(query)};
  payload["topk"] = c.topk;
  payload["return_scores"] = false;
  const vime::HttpResponse response =
      vime::http_fetch(vime::HttpRequest::post_json(c.search_url, payload, c.search_timeout_s));
  vime::Json body;
  try {
    if (!response.ok()) throw vime::Error(response.describe());
    body = vime::Json::parse(response.body, "the retrieval server's reply");
  } catch (const vime::Error& e) {
    std::fprintf(stderr, "Error calling local search engine at %s: %s\n", c.search_url.c_str(),
                 e.what());
    return {};
  }
  // result.get("result", [[]])[0]; items without non-empty "contents" get slime's placeholder.
  const vime::Json* result = body.is_object() ? body.find("result") : nullptr;
  if (!result || !result->is_array() || result->size() == 0 || !result->at(0).is_array()) return {};
  std::vector<std::string> contents;
  for (const vime::Json& item : result->at(0).as_array()) {
    if (!item.is_object()) continue;
    const vime::Json* text = item.find("contents");
    const bool has_text = text && text->is_string() && !text->as_string().empty();
    contents.push_back(has_text ? text->as_string() : kNoContent);
  }
  return contents;
}

}  // namespace

std::string passages_to_string(const std::vector<std::string>& contents) {
  std::string out;
  for (size_t i = 0; i < contents.size(); ++i) {
    const std::string& content = contents[i];
    const size_t newline = content.find('\n');
    const std::string title = content.substr(0, newline);
    const std::string text = newline == std::string::npos ? "" : content.substr(newline + 1);
    out += "Doc " + std::to_string(i + 1) + "(Title: " + title + ") " + text + "\n";
  }
  return out;
}

std::vector<std::string> search(const SearchConfig& c, const std::string& query) {
  Semaphore& slots = search_slots(c.search_concurrency);
  slots.acquire();
  struct Release {
    Semaphore& s;
    ~Release() { s.release(); }
  } release{slots};
  if (!c.in_process()) return http_search(c, query);
  std::vector<std::string> contents = in_process_index(c).search(query, c.topk);
  for (std::string& text : contents) {
    if (text.empty()) text = kNoContent;
  }
  return contents;
}

}  // namespace search_r1
