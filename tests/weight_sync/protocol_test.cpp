// The torch-free half of the NCCL weight transfer: base64 and the ncclUniqueId pickle against
// python3 as the oracle, the vLLM JSON shapes, the packing plan, the dtype map.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <sstream>

#include "support/skip.hpp"
#include "support/test_support.hpp"
#include "vime/core/base64.hpp"
#include "vime/error.hpp"
#include "vime/weight_sync/nccl_library.hpp"
#include "vime/weight_sync/transfer_protocol.hpp"
#include "vime/weight_sync/unique_id_pickle.hpp"

using vime::Json;
using namespace vime::weight_sync;
using vime::base64_decode;
using vime::base64_encode;

namespace {

bool have_python() { return vime::test::run_command("python3 -c 'import base64'").exit_code == 0; }

std::string to_hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string random_bytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = char(rng() & 0xff);
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

TEST_CASE("weight_sync: base64 equals python3's b64encode/b64decode", "[weight_sync]") {
  if (!have_python()) VIME_SKIP("no python3");
  vime::test::TempDir dir;
  std::mt19937 rng(7);
  std::vector<std::string> inputs;
  for (size_t n = 0; n < 70; ++n) inputs.push_back(random_bytes(rng, n));
  inputs.push_back(random_bytes(rng, 128));          // an ncclUniqueId
  inputs.push_back(std::string("\xfb\xff\xbf", 3));  // '+' and '/' in the output
  std::string hex_lines;
  for (const auto& s : inputs) hex_lines += to_hex(s) + "\n";
  const auto in = dir.write("in.txt", hex_lines);
  const auto out = vime::test::run_command(
      "python3 -c 'import base64,sys\nfor l in open(sys.argv[1]): "
      "print(base64.b64encode(bytes.fromhex(l.strip())).decode())' " +
      in.string());
  REQUIRE(out.exit_code == 0);
  std::istringstream lines(out.output);
  for (const auto& s : inputs) {
    std::string expected;
    std::getline(lines, expected);
    CHECK(base64_encode(s) == expected);
    CHECK(base64_decode(expected, "test") == s);
  }
}

TEST_CASE("weight_sync: base64_decode refuses what Python's strict decode refuses",
          "[weight_sync]") {
  CHECK(base64_decode("", "t").empty());
  CHECK(base64_decode("YQ==", "t") == "a");
  CHECK_THROWS_WITH(base64_decode("YQ=", "init_info.x"), Catch::Contains("init_info.x"));
  CHECK_THROWS_WITH(base64_decode("-_-_", "t"), Catch::Contains("standard alphabet"));
  CHECK_THROWS_AS(base64_decode("Y===", "t"), vime::Error);
  CHECK_THROWS_AS(base64_decode("YQ==YQ==", "t"), vime::Error);
  CHECK_THROWS_AS(base64_decode("Y=Q=", "t"), vime::Error);
}

TEST_CASE("weight_sync: the ncclUniqueId pickle is what vLLM's workers unpickle", "[weight_sync]") {
  if (!have_python()) VIME_SKIP("no python3");
  vime::test::TempDir dir;
  dir.write("vllm/__init__.py", "");
  dir.write("vllm/distributed/__init__.py", "");
  dir.write("vllm/distributed/device_communicators/__init__.py", "");
  dir.write("vllm/distributed/device_communicators/pynccl_wrapper.py",
            "import ctypes\n"
            "class ncclUniqueId(ctypes.Structure):\n"
            "    _fields_ = [('internal', ctypes.c_byte * 128)]\n");
  std::mt19937 rng(11);
  for (int round = 0; round < 3; ++round) {
    NcclUniqueId id;
    const std::string bytes = random_bytes(rng, 128);
    std::copy(bytes.begin(), bytes.end(), id.internal);
    const std::string payload = pickle_unique_id(id);
    REQUIRE(payload.size() == 247);
    std::ofstream(dir.path() / "payload.bin", std::ios::binary) << payload;
    // Unpickle ours; pickle the struct again with protocol 4, as vLLM's trainer side does.
    dir.write("check.py",
              "import pickle, sys\n"
              "sys.path.insert(0, sys.argv[1])\n"
              "from vllm.distributed.device_communicators.pynccl_wrapper import ncclUniqueId\n"
              "o = pickle.loads(open(sys.argv[2], 'rb').read())\n"
              "assert type(o) is ncclUniqueId, type(o)\n"
              "print(bytes(o.internal).hex())\n"
              "print(pickle.dumps(o, protocol=4).hex())\n");
    const auto out =
        vime::test::run_command("python3 " + (dir.path() / "check.py").string() + " " +
                                dir.path().string() + " " + (dir.path() / "payload.bin").string());
    REQUIRE(out.exit_code == 0);
    std::istringstream lines(out.output);
    std::string id_hex, repickled_hex;
    std::getline(lines, id_hex);
    std::getline(lines, repickled_hex);
    CHECK(trim(id_hex) == to_hex(bytes));
    CHECK(trim(repickled_hex) == to_hex(payload));
    const NcclUniqueId back = unpickle_unique_id(payload);
    CHECK(std::string(back.internal, 128) == bytes);
  }
  CHECK_THROWS_WITH(unpickle_unique_id("not a pickle"), Catch::Contains("broadcast_from/0/0"));
}

TEST_CASE("weight_sync: init_info and update_info have vLLM's JSON shapes", "[weight_sync]") {
  NcclInitInfo tcp;
  tcp.master_address = "10.0.0.5";
  tcp.master_port = 29650;
  tcp.rank_offset = 1;
  tcp.world_size = 3;
  tcp.packed = false;
  CHECK(tcp.to_json() == Json::parse(R"({"master_address": "10.0.0.5", "master_port": 29650,
      "rank_offset": 1, "world_size": 3, "packed": false,
      "packed_buffer_size_bytes": 1073741824, "packed_num_buffers": 2})"));
  NcclInitInfo uid = tcp;
  uid.nccl_unique_id_b64 = "QUJD";
  uid.packed = true;
  const Json uid_json = uid.to_json();
  CHECK_FALSE(uid_json.contains("master_address"));
  CHECK_FALSE(uid_json.contains("master_port"));
  CHECK(uid_json.at("nccl_unique_id_b64").as_string() == "QUJD");
  CHECK(uid_json.at("packed").as_bool());

  Json body = Json::object();
  body["init_info"] = uid_json;
  const NcclInitInfo parsed = NcclInitInfo::from_json(body);
  CHECK(parsed.uses_unique_id());
  CHECK(parsed.world_size == 3);
  CHECK(parsed.packed);
  CHECK(NcclInitInfo::from_json(tcp.to_json()).master_port == 29650);
  Json both = uid_json;
  both["master_address"] = "h";
  both["master_port"] = 1;
  CHECK_THROWS_WITH(NcclInitInfo::from_json(both), Catch::Contains("both"));
  CHECK_THROWS_WITH(NcclInitInfo::from_json(Json::parse(R"({"world_size": 2})")),
                    Catch::Contains("neither"));
  CHECK_THROWS_WITH(
      NcclInitInfo::from_json(Json::parse(R"({"nccl_unique_id_b64":"QQ==","world_size":2,
                                              "rank_offset":2})")),
      Catch::Contains("rank_offset"));

  UpdateInfo update;
  update.tensors = {{"model.embed_tokens.weight", "bfloat16", {151936, 4096}},
                    {"model.layers.0.self_attn.q_proj.weight", "bfloat16", {4096, 4096}}};
  CHECK(update.to_json() == Json::parse(R"({
      "names": ["model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"],
      "dtype_names": ["bfloat16", "bfloat16"],
      "shapes": [[151936, 4096], [4096, 4096]]})"));
  update.legacy_packed = false;
  CHECK(update.to_json().at("packed") == Json(false));
  Json wrapped = Json::object();
  wrapped["update_info"] = update.to_json();
  const UpdateInfo back = UpdateInfo::from_json(wrapped);
  REQUIRE(back.tensors.size() == 2);
  CHECK(back.tensors[1].shape == std::vector<int64_t>{4096, 4096});
  CHECK(back.tensors[0].nbytes() == int64_t(151936) * 4096 * 2);
  CHECK(back.legacy_packed == false);
  CHECK_THROWS_WITH(UpdateInfo::from_json(Json::parse(
                        R"({"names":["a"],"dtype_names":["float8_e4m3fn"],"shapes":[[1]]})")),
                    Catch::Contains("float8_e4m3fn"));
  CHECK_THROWS_WITH(UpdateInfo::from_json(Json::parse(R"({"names":["a","b"],"dtype_names":["int8"],
                                            "shapes":[[1]]})")),
                    Catch::Contains("differ in length"));
}

TEST_CASE("weight_sync: packing flushes once the bytes pass the buffer size", "[weight_sync]") {
  auto metas = [](std::vector<int64_t> sizes) {  // uint8 tensors of these byte sizes
    std::vector<TensorMeta> out;
    for (size_t i = 0; i < sizes.size(); ++i) {
      out.push_back({"t" + std::to_string(i), "uint8", {sizes[i]}});
    }
    return out;
  };
  auto plan = [](const std::vector<TensorMeta>& t, int64_t buffer) {
    std::vector<std::tuple<size_t, size_t, int64_t>> out;
    for (const auto& c : plan_packed_chunks(t, buffer)) out.emplace_back(c.begin, c.end, c.nbytes);
    return out;
  };
  using Plan = std::vector<std::tuple<size_t, size_t, int64_t>>;
  CHECK(plan(metas({}), 8).empty());
  CHECK(plan(metas({4, 4, 4}), 8) == Plan{{0, 3, 12}});  // 8 is not > 8: the third joins
  CHECK(plan(metas({4, 4, 4}), 7) == Plan{{0, 2, 8}, {2, 3, 4}});
  CHECK(plan(metas({20, 1, 1}), 8) == Plan{{0, 1, 20}, {1, 3, 2}});  // one tensor over the size
  CHECK(plan(metas({9}), 8) == Plan{{0, 1, 9}});
  CHECK(plan(metas({8}), 8) == Plan{{0, 1, 8}});
  CHECK(plan(metas({3, 3, 3, 3, 3}), 5) == Plan{{0, 2, 6}, {2, 4, 6}, {4, 5, 3}});
  // bf16 sizes count bytes, not elements.
  CHECK(plan({{"a", "bfloat16", {2, 3}}, {"b", "bfloat16", {1}}}, 12) == Plan{{0, 2, 14}});
}

TEST_CASE("weight_sync: dtype map is vLLM's ncclDataTypeEnum", "[weight_sync]") {
  CHECK(nccl_data_type("int8") == 0);
  CHECK(nccl_data_type("uint8") == 1);
  CHECK(nccl_data_type("int32") == 2);
  CHECK(nccl_data_type("int64") == 4);
  CHECK(nccl_data_type("float16") == 6);
  CHECK(nccl_data_type("float32") == 7);
  CHECK(nccl_data_type("float64") == 8);
  CHECK(nccl_data_type("bfloat16") == 9);
  CHECK(nccl_data_type("torch.bfloat16") == 9);
  CHECK(nccl_data_type("half") == 6);
  CHECK(dtype_item_size("bfloat16") == 2);
  CHECK(dtype_item_size("int64") == 8);
  CHECK_THROWS_WITH(nccl_data_type("float8_e4m3fn"), Catch::Contains("packed"));
}

TEST_CASE("weight_sync: a missing libnccl is one clear error", "[weight_sync]") {
  CHECK_THROWS_WITH(
      NcclLibrary("libnccl_missing_for_test.so.2"),
      Catch::Contains("libnccl_missing_for_test.so.2") && Catch::Contains("VIME_NCCL_LIB_DIR"));
}
