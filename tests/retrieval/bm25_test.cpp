// The BM25 index (lib/vime/retrieval): Lucene's BM25 scores computed by hand, ranking and ties,
// save/load round trips and corrupt index files, and `vime retrieve serve`'s HTTP contract (slime's
// local_search_server) over real HTTP on 127.0.0.1.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "support/test_support.hpp"
#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/retrieval/bm25_index.hpp"
#include "vime/retrieval/open_index.hpp"
#include "vime/retrieval/retrieval_server.hpp"
#include "vime/retrieval/text_analyzer.hpp"

using vime::retrieval::Bm25Index;
using vime::retrieval::Document;

namespace {

std::vector<Document> tiny_corpus() {
  return {{"0", "\"Zorvath\"\nZorvath was born in Mirelund."},
          {"1", "\"Mirelund\"\nMirelund is a city. Mirelund has a harbour."},
          {"2", "\"Quellin\"\nQuellin is a painter born in Osterhaven in 1901."},
          {"3", "\"Empty\"\n"}};
}

// Lucene's BM25 for one term, written out independently of the index.
double bm25(double tf, double df, double n, double dl, double avgdl, double k1 = 0.9,
            double b = 0.4) {
  const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
  return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl));
}

}  // namespace

TEST_CASE("the analyzer lower-cases, splits on punctuation and drops stop words", "[retrieval]") {
  CHECK(vime::retrieval::analyze("The City of MIRELUND, born-1901!") ==
        std::vector<std::string>{"city", "mirelund", "born", "1901"});
  CHECK(vime::retrieval::analyze("\"Été\" à") == std::vector<std::string>{"Été", "à"});
  CHECK(vime::retrieval::analyze("").empty());
}

TEST_CASE("BM25 scores are Lucene's with k1 0.9 and b 0.4", "[retrieval]") {
  Bm25Index index(tiny_corpus());
  REQUIRE(index.size() == 4);
  // Lengths: doc0 zorvath zorvath born mirelund = 4; doc1 mirelund mirelund city mirelund
  // harbour = 5... computed from the analyzer itself.
  std::vector<double> len;
  for (const auto& d : tiny_corpus()) len.push_back(vime::retrieval::analyze(d.contents).size());
  const double avgdl = (len[0] + len[1] + len[2] + len[3]) / 4;
  auto hits = index.search("mirelund", 10);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].doc == 1);  // three occurrences beat one
  CHECK(hits[0].score == Approx(bm25(3, 2, 4, len[1], avgdl)).epsilon(1e-6));
  CHECK(hits[1].doc == 0);
  CHECK(hits[1].score == Approx(bm25(1, 2, 4, len[0], avgdl)).epsilon(1e-6));
  // Two terms add up; a repeated query term counts twice; top-k cuts.
  auto two = index.search("Quellin painter", 1);
  REQUIRE(two.size() == 1);
  CHECK(two[0].doc == 2);
  CHECK(two[0].score ==
        Approx(bm25(2, 1, 4, len[2], avgdl) + bm25(1, 1, 4, len[2], avgdl)).epsilon(1e-6));
  CHECK(index.search("painter painter", 1)[0].score ==
        Approx(2 * bm25(1, 1, 4, len[2], avgdl)).epsilon(1e-6));
  CHECK(index.search("nothing matches", 3).empty());
  CHECK(index.search("the of", 3).empty());  // stop words only
  CHECK(index.search("mirelund", 0).empty());
}

TEST_CASE("equal scores rank the earlier document first", "[retrieval]") {
  Bm25Index index({{"a", "alpha beta"}, {"b", "alpha beta"}, {"c", "alpha beta"}});
  auto hits = index.search("alpha", 3);
  REQUIRE(hits.size() == 3);
  CHECK(hits[0].doc == 0);
  CHECK(hits[1].doc == 1);
  CHECK(hits[2].doc == 2);
}

TEST_CASE("an index is saved, loaded back identical, and rebuilt for another corpus",
          "[retrieval]") {
  vime::test::TempDir dir;
  std::string jsonl;
  for (const auto& d : tiny_corpus()) {
    jsonl += vime::Json(vime::Json::Object{{"id", d.id}, {"contents", d.contents}}).dump() + "\n";
  }
  const auto corpus = dir.write("corpus.jsonl", jsonl);
  const auto index_dir = dir.path() / "index";
  std::string how;
  auto built = vime::retrieval::open_index({corpus, index_dir, {}}, &how);
  CHECK_THAT(how, Catch::Contains("built from") && Catch::Contains("saved to"));
  REQUIRE(std::filesystem::exists(Bm25Index::index_file(index_dir)));
  auto loaded = vime::retrieval::open_index({corpus, index_dir, {}}, &how);
  CHECK_THAT(how, Catch::StartsWith("loaded"));
  auto only_index = vime::retrieval::open_index({"", index_dir, {}}, &how);
  for (const char* q : {"mirelund", "quellin 1901", "harbour city"}) {
    auto a = built.search(q, 3), b = loaded.search(q, 3), c = only_index.search(q, 3);
    REQUIRE(a.size() == b.size());
    REQUIRE(a.size() == c.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].doc == b[i].doc);
      CHECK(a[i].score == b[i].score);
      CHECK(a[i].doc == c[i].doc);
    }
  }
  CHECK(loaded.doc(2).id == "2");
  CHECK(loaded.doc(2).contents == tiny_corpus()[2].contents);

  // Another corpus or other parameters: rebuilt, not served stale.
  dir.write("corpus.jsonl", jsonl + "{\"id\": 9, \"contents\": \"\\\"New\\\"\\nharbour\"}\n");
  auto rebuilt = vime::retrieval::open_index({corpus, index_dir, {}}, &how);
  CHECK_THAT(how, Catch::Contains("built from"));
  CHECK(rebuilt.size() == 5);
  CHECK(rebuilt.doc(4).id == "9");
  vime::retrieval::open_index({corpus, index_dir, {1.2, 0.75}}, &how);
  CHECK_THAT(how, Catch::Contains("built from"));
}

TEST_CASE("bad corpora and corrupt indexes are usage errors naming the file", "[retrieval]") {
  vime::test::TempDir dir;
  auto bad_line = dir.write("bad.jsonl", "{\"id\": \"1\", \"contents\": \"x\"}\n{\"id\": 2}\n");
  CHECK_THROWS_WITH(vime::retrieval::open_index({bad_line, "", {}}),
                    Catch::Contains("bad.jsonl:2") && Catch::Contains("contents"));
  auto not_json = dir.write("nj.jsonl", "not json\n");
  CHECK_THROWS_AS(vime::retrieval::open_index({not_json, "", {}}), vime::UsageError);
  CHECK_THROWS_WITH(vime::retrieval::open_index({dir.path() / "missing.jsonl", "", {}}),
                    Catch::Contains("missing.jsonl"));
  CHECK_THROWS_WITH(vime::retrieval::open_index({"", dir.path() / "none", {}}),
                    Catch::Contains("give --corpus"));
  CHECK_THROWS_AS(vime::retrieval::open_index({"", "", {}}), vime::UsageError);

  // A truncated index file, and one that is not an index at all.
  Bm25Index(tiny_corpus()).save(dir.path() / "idx");
  const auto file = Bm25Index::index_file(dir.path() / "idx");
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (size_t cut : {size_t{3}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc).write(bytes.data(), cut);
    CHECK_THROWS_AS(Bm25Index::load(dir.path() / "idx"), vime::UsageError);
  }
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "hello world, not an index";
  CHECK_THROWS_WITH(Bm25Index::load(dir.path() / "idx"), Catch::Contains("not a vime BM25 index"));
}

TEST_CASE("the retrieval server answers slime's /retrieve contract", "[retrieval]") {
  Bm25Index index(tiny_corpus());
  vime::retrieval::RetrievalServerOptions options;
  options.port = 0;
  vime::retrieval::RetrievalServer server(index, options);
  server.start();
  auto post = [&](const std::string& body) {
    vime::http::Request r;
    r.method = "POST";
    r.url = server.url() + "/retrieve";
    r.body = body;
    r.headers.push_back({"Content-Type", "application/json"});
    return vime::http::fetch(r);
  };
  // Exactly what slime's local_search sends.
  auto r = post(R"({"queries": ["mirelund", "painter"], "topk": 3, "return_scores": false})");
  REQUIRE(r.status == 200);
  auto body = vime::Json::parse(r.body);
  REQUIRE(body.at("result").size() == 2);
  CHECK(body.at("result").at(0).size() == 2);
  CHECK(body.at("result").at(0).at(0).at("id").as_string() == "1");
  CHECK(body.at("result").at(0).at(0).at("contents").as_string() == tiny_corpus()[1].contents);
  CHECK(body.at("result").at(1).at(0).at("id").as_string() == "2");
  // Search-R1's return_scores form.
  r = post(R"({"queries": ["mirelund"], "topk": 1, "return_scores": true})");
  body = vime::Json::parse(r.body);
  REQUIRE(body.at("result").at(0).size() == 1);
  CHECK(body.at("result").at(0).at(0).at("document").at("id").as_string() == "1");
  CHECK(body.at("result").at(0).at(0).at("score").as_double() ==
        Approx(index.search("mirelund", 1)[0].score));
  // Defaults: topk 3.
  r = post(R"({"queries": ["born"]})");
  CHECK(vime::Json::parse(r.body).at("result").at(0).size() == 2);
  CHECK(server.queries_served() == 4);
  // Bad requests: 400 with a reason, the server keeps serving.
  for (const char* bad :
       {"not json", R"({"topk": 3})", R"({"queries": [1]})", R"({"queries": ["x"], "topk": 0})",
        R"({"queries": ["x"], "topk": "3"})", R"({"queries": ["x"], "return_scores": 1})"}) {
    auto e = post(bad);
    CHECK(e.status == 400);
    CHECK_THAT(e.body, Catch::Contains("detail"));
  }
  auto health = vime::http::fetch(vime::http::Request::get(server.url() + "/health"));
  CHECK(health.status == 200);
  CHECK(vime::Json::parse(health.body).at("documents").as_int() == 4);
}
