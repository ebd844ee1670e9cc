// safetensors: round trips of every dtype, sharded directories, a file written by Python (the
// goldens of tests/model), and corrupt or truncated files.
#include "vime/ckpt/safetensors.hpp"

#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "support/test_support.hpp"

using namespace vime::ckpt;

namespace {

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

std::string with_header(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  uint64_t len = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(len >> (8 * i));
  return out + header + std::string(data_bytes, '\0');
}

}  // namespace

TEST_CASE("safetensors round trip keeps dtype, shape and bytes", "[ckpt]") {
  vime::test::TempDir dir;
  NamedTensors tensors{
      {"f32", at::randn({3, 4})},
      {"bf16", at::randn({5}).to(at::kBFloat16)},
      {"f16", at::randn({2, 2, 2}).to(at::kHalf)},
      {"i64", at::arange(7, at::kLong)},
      {"scalar", at::scalar_tensor(2.5)},
      {"empty", at::zeros({0, 3})},
  };
  write_safetensors(dir.path() / "t.safetensors", tensors, {{"format", "pt"}});
  SafetensorsFile file(dir.path() / "t.safetensors");
  CHECK(file.metadata().at("format") == "pt");
  REQUIRE(file.names().size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    CAPTURE(name);
    auto got = file.get(name);
    CHECK(got.scalar_type() == t.scalar_type());
    CHECK(got.sizes() == t.sizes());
    CHECK(got.equal(t));
  }
  auto view = file.get("f32");
  view.add_(1);  // copy-on-write: the file stays as written
  CHECK(SafetensorsFile(dir.path() / "t.safetensors").get("f32").equal(tensors[0].second));
}

TEST_CASE("sharded directories with an index", "[ckpt]") {
  vime::test::TempDir dir;
  NamedTensors tensors;
  for (const char* name : {"w0", "w1", "w2", "w3", "w4"})
    tensors.emplace_back(name, at::randn({256}));
  write_safetensors_dir(dir.path(), tensors, /*max_shard_bytes=*/2048);
  CHECK(std::filesystem::exists(dir.path() / "model.safetensors.index.json"));
  CHECK(std::filesystem::exists(dir.path() / "model-00003-of-00003.safetensors"));
  auto back = read_safetensors_dir(dir.path());
  REQUIRE(back.size() == 5);
  std::map<std::string, at::Tensor> by_name(back.begin(), back.end());
  for (const auto& [name, t] : tensors) CHECK(by_name.at(name).equal(t));
  std::filesystem::remove(dir.path() / "model-00002-of-00003.safetensors");
  CHECK_THROWS_WITH(
      read_safetensors_dir(dir.path()),
      Catch::Contains("model-00002-of-00003.safetensors") && Catch::Contains("missing"));
}

TEST_CASE("reads a file written by Python", "[ckpt]") {
  SafetensorsFile file(VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen2/logits.safetensors");
  CHECK(file.get("logits").sizes() == at::IntArrayRef({17, 96}));
  CHECK(file.get("cu_seqlens").equal(at::tensor(std::vector<int64_t>{0, 5, 14, 17})));
}

TEST_CASE("corrupt and truncated files give one clear error naming file and tensor", "[ckpt]") {
  vime::test::TempDir dir;
  auto good = dir.path() / "good.safetensors";
  write_safetensors(good, {{"a", at::randn({4})}, {"b", at::randn({2})}});
  const std::string bytes = read_bytes(good);
  auto bad = dir.path() / "bad.safetensors";

  write_bytes(bad, bytes.substr(0, bytes.size() - 3));
  CHECK_THROWS_WITH(SafetensorsFile(bad), Catch::Contains("bad.safetensors") &&
                                              Catch::Contains("run past") &&
                                              Catch::Contains("truncated"));
  write_bytes(bad, bytes.substr(0, 5));
  CHECK_THROWS_WITH(SafetensorsFile(bad), Catch::Contains("shorter than the 8-byte header"));
  write_bytes(bad, std::string("\xff\xff\xff\x00\x00\x00\x00\x00", 8) + "{}");
  CHECK_THROWS_WITH(SafetensorsFile(bad), Catch::Contains("header length"));
  write_bytes(bad, with_header(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8));
  CHECK_THROWS_WITH(SafetensorsFile(bad),
                    Catch::Contains("tensor \"x\"") && Catch::Contains("needs 12"));
  write_bytes(bad, with_header(R"({"x":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 8));
  CHECK_THROWS_WITH(SafetensorsFile(bad), Catch::Contains("unsupported dtype"));
  write_bytes(bad, with_header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                               12));
  CHECK_THROWS_WITH(SafetensorsFile(bad), Catch::Contains("overlap"));
  write_bytes(bad, with_header(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4));
  CHECK_THROWS_WITH(SafetensorsFile(bad), Catch::Contains("not a list of sizes"));
  write_bytes(bad, with_header("{not json", 0));
  CHECK_THROWS_WITH(SafetensorsFile(bad), Catch::Contains("bad.safetensors"));
  CHECK_THROWS_WITH(SafetensorsFile(dir.path() / "none.safetensors"),
                    Catch::Contains("none.safetensors") && Catch::Contains("cannot open"));
}
