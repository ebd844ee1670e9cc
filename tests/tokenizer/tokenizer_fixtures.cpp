#include "tokenizer/tokenizer_fixtures.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "vime/error.hpp"
#include "vime/tokenizer/read_file.hpp"

namespace vime::test {

std::string asset_dir(const std::string& name) {
  static const std::map<std::string, std::string> kDirs = {{"qwen3", "tokenizer-qwen3"},
                                                           {"llama3", "tokenizer-llama3"},
                                                           {"gpt2", "gpt2"},
                                                           {"deepseek_v3", "tokenizer-deepseek-v3"},
                                                           {"gemma3", "tokenizer-gemma3"},
                                                           {"gpt4o", "tokenizer-gpt4o"}};
  const std::string dir = std::string(VIME_ASSET_DIR) + "/" + kDirs.at(name);
  if (!std::filesystem::is_directory(dir)) {
    throw Error("test asset " + dir +
                " is missing: run scripts/fetch_assets.sh (scripts/setup.sh does)");
  }
  return dir;
}

const tokenizer::HfTokenizer& real_tokenizer(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<tokenizer::HfTokenizer>> loaded;
  std::lock_guard lock(mutex);
  auto& slot = loaded[name];
  if (!slot) slot = tokenizer::HfTokenizer::from_directory(asset_dir(name));
  return *slot;
}

std::unique_ptr<tokenizer::HfTokenizer> variant_tokenizer(const std::string& name) {
  const std::string path =
      std::string(VIME_SOURCE_DIR) + "/tests/data/tokenizer/variants/" + name + ".json";
  const std::string variant_text = tokenizer::read_file(path);
  rapidjson::Document variant;
  variant.Parse(variant_text.data(), variant_text.size());
  if (variant.HasParseError()) throw Error("bad variant file " + path);
  rapidjson::Document tj;
  if (variant.HasMember("base")) {
    const std::string base = tokenizer::read_file(std::string(VIME_ASSET_DIR) + "/" +
                                                  variant["base"].GetString() + "/tokenizer.json");
    tj.Parse(base.data(), base.size());
  } else {
    tj.CopyFrom(variant["tokenizer"], tj.GetAllocator());
  }
  if (variant.HasMember("patch")) {
    for (auto& member : variant["patch"].GetObject()) {
      tj.RemoveMember(member.name.GetString());
      rapidjson::Value key(member.name, tj.GetAllocator());
      rapidjson::Value value(member.value, tj.GetAllocator());
      tj.AddMember(key, value, tj.GetAllocator());
    }
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  tj.Accept(writer);
  return tokenizer::HfTokenizer::from_json(std::string_view(buffer.GetString(), buffer.GetSize()),
                                           {}, name);
}

std::vector<Json> read_golden(const std::string& file) {
  const std::string path = std::string(VIME_SOURCE_DIR) + "/tests/data/tokenizer/" + file;
  std::ifstream in(path);
  if (!in) throw Error("cannot read golden " + path);
  std::vector<Json> lines;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty()) lines.push_back(Json::parse(line, path + ":" + std::to_string(number)));
  }
  return lines;
}

std::string show_ids(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

}  // namespace vime::test
