// Builds an HfTokenizer from HF's tokenizer.json / tokenizer_config.json. Every error names the
// file and the JSON field.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "vime/core/json_depth.hpp"
#include "vime/error.hpp"
#include "vime/regex.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"
#include "vime/tokenizer/read_file.hpp"

namespace vime::tokenizer {
namespace {

using Value = rapidjson::Value;

class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error("tokenizer: " + where_ + ": " + field + ": " + what);
  }
  const Value& member(const Value& object, const char* key, const std::string& field) const {
    if (!object.IsObject() || !object.HasMember(key))
      fail(field, std::string("missing '") + key + "'");
    return object[key];
  }
  const Value* optional(const Value& object, const char* key) const {
    if (!object.IsObject() || !object.HasMember(key) || object[key].IsNull()) return nullptr;
    return &object[key];
  }
  bool boolean(const Value& object, const char* key, bool fallback,
               const std::string& field) const {
    const Value* v = optional(object, key);
    if (v == nullptr) return fallback;
    if (!v->IsBool()) fail(field + "." + key, "expected true or false");
    return v->GetBool();
  }
  std::string string(const Value& object, const char* key, const std::string& fallback,
                     const std::string& field) const {
    const Value* v = optional(object, key);
    if (v == nullptr) return fallback;
    if (!v->IsString()) fail(field + "." + key, "expected a string");
    return std::string(v->GetString(), v->GetStringLength());
  }
  std::string type(const Value& object, const std::string& field) const {
    const Value& t = member(object, "type", field);
    if (!t.IsString()) fail(field + ".type", "expected a string");
    return t.GetString();
  }
  // A Split/Replace pattern: {"Regex": "..."} or {"String": "..."}, as a PCRE2 pattern.
  std::string pattern(const Value& object, const std::string& field) const {
    const Value& p = member(object, "pattern", field);
    if (const Value* regex = optional(p, "Regex"); regex && regex->IsString())
      return regex->GetString();
    if (const Value* literal = optional(p, "String"); literal && literal->IsString()) {
      return Regex::escape(std::string_view(literal->GetString(), literal->GetStringLength()));
    }
    fail(field + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
  }
  PrependScheme prepend_scheme(const Value& object, const std::string& field) const {
    const Value* scheme = optional(object, "prepend_scheme");
    if (scheme == nullptr) {  // older files: add_prefix_space
      return boolean(object, "add_prefix_space", true, field) ? PrependScheme::kAlways
                                                              : PrependScheme::kNever;
    }
    const std::string s = scheme->IsString() ? scheme->GetString() : "";
    if (s == "always") return PrependScheme::kAlways;
    if (s == "first") return PrependScheme::kFirst;
    if (s == "never") return PrependScheme::kNever;
    fail(field + ".prepend_scheme", "expected always, first or never");
  }

  std::unique_ptr<Normalizer> normalizer(const Value& v, const std::string& field) const {
    const std::string t = type(v, field);
    if (t == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfc);
    if (t == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfd);
    if (t == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfkc);
    if (t == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfkd);
    if (t == "Lowercase") return std::make_unique<LowercaseNormalizer>();
    if (t == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
    if (t == "Strip") {
      return std::make_unique<StripNormalizer>(boolean(v, "strip_left", true, field),
                                               boolean(v, "strip_right", true, field));
    }
    if (t == "Replace") {
      return std::make_unique<ReplaceNormalizer>(pattern(v, field),
                                                 string(v, "content", "", field));
    }
    if (t == "Prepend") return std::make_unique<PrependNormalizer>(string(v, "prepend", "", field));
    if (t == "Sequence") {
      std::vector<std::unique_ptr<Normalizer>> steps;
      const Value& list = member(v, "normalizers", field);
      if (!list.IsArray()) fail(field + ".normalizers", "expected a list");
      for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
        steps.push_back(normalizer(list[i], field + ".normalizers[" + std::to_string(i) + "]"));
      }
      return std::make_unique<SequenceNormalizer>(std::move(steps));
    }
    fail(field, "normalizer type '" + t + "' is not supported by vime");
  }

  std::unique_ptr<PreTokenizer> pre_tokenizer(const Value& v, const std::string& field,
                                              bool& byte_level) const {
    const std::string t = type(v, field);
    if (t == "Split") {
      const std::string behavior = string(v, "behavior", "Isolated", field);
      SplitBehavior b;
      if (behavior == "Isolated") {
        b = SplitBehavior::kIsolated;
      } else if (behavior == "Removed") {
        b = SplitBehavior::kRemoved;
      } else if (behavior == "MergedWithPrevious") {
        b = SplitBehavior::kMergedWithPrevious;
      } else if (behavior == "MergedWithNext") {
        b = SplitBehavior::kMergedWithNext;
      } else if (behavior == "Contiguous") {
        b = SplitBehavior::kContiguous;
      } else {
        fail(field + ".behavior", "unknown split behavior '" + behavior + "'");
      }
      return std::make_unique<SplitPreTokenizer>(pattern(v, field), b,
                                                 boolean(v, "invert", false, field));
    }
    if (t == "ByteLevel") {
      byte_level = true;
      return std::make_unique<ByteLevelPreTokenizer>(boolean(v, "add_prefix_space", true, field),
                                                     boolean(v, "use_regex", true, field));
    }
    if (t == "Digits") {
      return std::make_unique<DigitsPreTokenizer>(boolean(v, "individual_digits", false, field));
    }
    if (t == "Metaspace") {
      return std::make_unique<MetaspacePreTokenizer>(
          string(v, "replacement", "\xE2\x96\x81", field), prepend_scheme(v, field),
          boolean(v, "split", true, field));
    }
    if (t == "WhitespaceSplit") return std::make_unique<WhitespaceSplitPreTokenizer>();
    if (t == "Sequence") {
      std::vector<std::unique_ptr<PreTokenizer>> stages;
      const Value& list = member(v, "pretokenizers", field);
      if (!list.IsArray()) fail(field + ".pretokenizers", "expected a list");
      for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
        stages.push_back(pre_tokenizer(list[i], field + ".pretokenizers[" + std::to_string(i) + "]",
                                       byte_level));
      }
      return std::make_unique<SequencePreTokenizer>(std::move(stages));
    }
    fail(field, "pre-tokenizer type '" + t + "' is not supported by vime");
  }

  std::unique_ptr<Decoder> decoder(const Value& v, const std::string& field) const {
    const std::string t = type(v, field);
    if (t == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
    if (t == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
    if (t == "Fuse") return std::make_unique<FuseDecoder>();
    if (t == "Strip") {
      const Value& start = member(v, "start", field);
      const Value& stop = member(v, "stop", field);
      if (!start.IsUint() || !stop.IsUint()) fail(field, "start and stop must be counts");
      return std::make_unique<StripDecoder>(string(v, "content", " ", field), start.GetUint(),
                                            stop.GetUint());
    }
    if (t == "Replace") {
      return std::make_unique<ReplaceDecoder>(pattern(v, field), string(v, "content", "", field));
    }
    if (t == "Metaspace") {
      return std::make_unique<MetaspaceDecoder>(string(v, "replacement", "\xE2\x96\x81", field),
                                                prepend_scheme(v, field));
    }
    if (t == "Sequence") {
      std::vector<std::unique_ptr<Decoder>> steps;
      const Value& list = member(v, "decoders", field);
      if (!list.IsArray()) fail(field + ".decoders", "expected a list");
      for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
        steps.push_back(decoder(list[i], field + ".decoders[" + std::to_string(i) + "]"));
      }
      return std::make_unique<SequenceDecoder>(std::move(steps));
    }
    fail(field, "decoder type '" + t + "' is not supported by vime");
  }

  int32_t special_id(const Value& pair, const std::string& field) const {  // ["[CLS]", 101]
    if (!pair.IsArray() || pair.Size() != 2 || !pair[1].IsInt())
      fail(field, "expected [token, id]");
    return pair[1].GetInt();
  }

  // The ids a post-processor puts before and after the text when add_special_tokens is on.
  void post_processor(const Value& v, const std::string& field, std::vector<int32_t>& prefix,
                      std::vector<int32_t>& suffix) const {
    const std::string t = type(v, field);
    if (t == "ByteLevel") return;
    if (t == "TemplateProcessing") {
      const Value& single = member(v, "single", field);
      const Value& specials = member(v, "special_tokens", field);
      if (!single.IsArray()) fail(field + ".single", "expected a list");
      bool after = false;
      for (rapidjson::SizeType i = 0; i < single.Size(); ++i) {
        const std::string item_field = field + ".single[" + std::to_string(i) + "]";
        if (optional(single[i], "Sequence")) {
          after = true;
          continue;
        }
        const Value& special = member(single[i], "SpecialToken", item_field);
        const Value& id = member(special, "id", item_field + ".SpecialToken");
        if (!id.IsString()) fail(item_field, "expected a token name");
        const Value& entry = member(specials, id.GetString(), field + ".special_tokens");
        const Value& ids = member(entry, "ids", field + ".special_tokens." + id.GetString());
        for (const Value& x : ids.GetArray()) (after ? suffix : prefix).push_back(x.GetInt());
      }
      return;
    }
    if (t == "BertProcessing" || t == "RobertaProcessing") {
      prefix.push_back(special_id(member(v, "cls", field), field + ".cls"));
      suffix.push_back(special_id(member(v, "sep", field), field + ".sep"));
      return;
    }
    if (t == "Sequence") {
      const Value& list = member(v, "processors", field);
      for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
        post_processor(list[i], field + ".processors[" + std::to_string(i) + "]", prefix, suffix);
      }
      return;
    }
    fail(field, "post-processor type '" + t + "' is not supported by vime");
  }

  std::unique_ptr<BpeModel> model(const Value& v, bool byte_level) const {
    const std::string field = "model";
    const std::string t = type(v, field);
    if (t != "BPE") fail(field, "model type '" + t + "' is not supported by vime (only BPE)");
    BpeOptions options;
    options.byte_level = byte_level;
    options.ignore_merges = boolean(v, "ignore_merges", false, field);
    options.byte_fallback = boolean(v, "byte_fallback", false, field);
    options.fuse_unk = boolean(v, "fuse_unk", false, field);
    if (const Value* unk = optional(v, "unk_token"); unk && unk->IsString()) {
      options.unk_token = unk->GetString();
    }
    options.continuing_subword_prefix = string(v, "continuing_subword_prefix", "", field);
    options.end_of_word_suffix = string(v, "end_of_word_suffix", "", field);

    const Value& vocab_json = member(v, "vocab", field);
    if (!vocab_json.IsObject()) fail("model.vocab", "expected an object of token -> id");
    TokenIdMap vocab;
    vocab.reserve(vocab_json.MemberCount());
    for (const auto& entry : vocab_json.GetObject()) {
      if (!entry.value.IsInt())
        fail("model.vocab",
             std::string("the id of '") + entry.name.GetString() + "' is not an integer");
      vocab.emplace(std::string(entry.name.GetString(), entry.name.GetStringLength()),
                    entry.value.GetInt());
    }
    std::vector<std::pair<std::string, std::string>> merges;
    if (const Value* list = optional(v, "merges")) {
      if (!list->IsArray()) fail("model.merges", "expected a list");
      merges.reserve(list->Size());
      for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
        const Value& m = (*list)[i];
        if (m.IsString()) {  // "a b"
          const std::string_view s(m.GetString(), m.GetStringLength());
          const size_t space = s.find(' ');
          if (space == std::string_view::npos || s.find(' ', space + 1) != std::string_view::npos) {
            fail("model.merges[" + std::to_string(i) + "]", "expected \"left right\"");
          }
          merges.emplace_back(std::string(s.substr(0, space)), std::string(s.substr(space + 1)));
        } else if (m.IsArray() && m.Size() == 2 && m[0].IsString() && m[1].IsString()) {
          merges.emplace_back(std::string(m[0].GetString(), m[0].GetStringLength()),
                              std::string(m[1].GetString(), m[1].GetStringLength()));
        } else {
          fail("model.merges[" + std::to_string(i) + "]",
               "expected \"left right\" or [left, right]");
        }
      }
    }
    return std::make_unique<BpeModel>(std::move(vocab), merges, std::move(options));
  }

  std::vector<AddedToken> added_tokens(const Value& list) const {
    std::vector<AddedToken> tokens;
    if (!list.IsArray()) fail("added_tokens", "expected a list");
    for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
      const std::string field = "added_tokens[" + std::to_string(i) + "]";
      const Value& t = list[i];
      AddedToken token;
      const Value& id = member(t, "id", field);
      if (!id.IsInt()) fail(field + ".id", "expected an integer");
      token.id = id.GetInt();
      token.content = string(t, "content", "", field);
      token.special = boolean(t, "special", false, field);
      token.single_word = boolean(t, "single_word", false, field);
      token.lstrip = boolean(t, "lstrip", false, field);
      token.rstrip = boolean(t, "rstrip", false, field);
      token.normalized = boolean(t, "normalized", !token.special, field);
      if (!token.content.empty()) tokens.push_back(std::move(token));
    }
    return tokens;
  }

 private:
  std::string where_;
};

void parse(rapidjson::Document& doc, std::string_view text, const std::string& where) {
  core::check_json_depth(text, "tokenizer: " + where);
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    throw Error("tokenizer: " + where + " is not valid JSON (" +
                rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
                std::to_string(doc.GetErrorOffset()) + ")");
  }
  if (!doc.IsObject()) throw Error("tokenizer: " + where + " is not a JSON object");
}

// A special token in tokenizer_config.json: "<s>" or {"content": "<s>", ...}.
std::optional<std::string> config_token(const Value& config, const char* key) {
  if (!config.HasMember(key)) return std::nullopt;
  const Value& v = config[key];
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsObject() && v.HasMember("content") && v["content"].IsString())
    return v["content"].GetString();
  return std::nullopt;
}

std::optional<bool> config_bool(const Value& config, const char* key) {
  if (!config.HasMember(key) || !config[key].IsBool()) return std::nullopt;
  return config[key].GetBool();
}

// transformers' LlamaTokenizerFast and GemmaTokenizerFast (what AutoTokenizer loads for these
// classes) replace the file's post-processor with BOS/EOS from add_bos_token / add_eos_token.
bool rebuilds_post_processor(const Value& config) {
  if (!config.HasMember("tokenizer_class") || !config["tokenizer_class"].IsString()) return false;
  std::string name = config["tokenizer_class"].GetString();
  if (name.ends_with("Fast")) name.resize(name.size() - 4);
  return name == "LlamaTokenizer" || name == "GemmaTokenizer" || name == "CodeLlamaTokenizer";
}

}  // namespace

std::unique_ptr<HfTokenizer> HfTokenizer::from_json(std::string_view tokenizer_json,
                                                    std::string_view config_json,
                                                    std::string_view where) {
  const std::string where_str(where);
  try {
    return build(tokenizer_json, config_json, where_str);
  } catch (const Error& e) {
    // Components (regexes, merges) do not know the file; say it once.
    const std::string message = e.what();
    if (message.find(where_str) != std::string::npos) throw;
    const std::string prefix = "tokenizer: ";
    throw Error(prefix + where_str + ": " +
                (message.starts_with(prefix) ? message.substr(prefix.size()) : message));
  }
}

std::unique_ptr<HfTokenizer> HfTokenizer::build(std::string_view tokenizer_json,
                                                std::string_view config_json,
                                                const std::string& where_str) {
  rapidjson::Document doc;
  parse(doc, tokenizer_json, where_str);
  Reader reader(where_str);
  TokenizerParts parts;
  bool byte_level = false;
  if (const Value* v = reader.optional(doc, "normalizer"))
    parts.normalizer = reader.normalizer(*v, "normalizer");
  if (const Value* v = reader.optional(doc, "pre_tokenizer")) {
    parts.pre_tokenizer = reader.pre_tokenizer(*v, "pre_tokenizer", byte_level);
  }
  if (const Value* v = reader.optional(doc, "decoder"))
    parts.decoder = reader.decoder(*v, "decoder");
  if (const Value* v = reader.optional(doc, "post_processor")) {
    reader.post_processor(*v, "post_processor", parts.special_prefix, parts.special_suffix);
  }
  parts.model = reader.model(reader.member(doc, "model", "tokenizer"), byte_level);
  if (const Value* v = reader.optional(doc, "added_tokens"))
    parts.added_tokens = reader.added_tokens(*v);

  if (!config_json.empty()) {
    const std::string config_where = where_str + " (tokenizer_config.json)";
    rapidjson::Document config;
    parse(config, config_json, config_where);
    parts.bos_token = config_token(config, "bos_token");
    parts.eos_token = config_token(config, "eos_token");
    parts.pad_token = config_token(config, "pad_token");
    if (config.HasMember("clean_up_tokenization_spaces") &&
        config["clean_up_tokenization_spaces"].IsBool()) {
      parts.clean_up_tokenization_spaces = config["clean_up_tokenization_spaces"].GetBool();
    }
    if (rebuilds_post_processor(config)) {
      parts.add_bos_token = config_bool(config, "add_bos_token").value_or(true);
      parts.add_eos_token = config_bool(config, "add_eos_token").value_or(false);
    }
  }
  return std::make_unique<HfTokenizer>(std::move(parts));
}

std::unique_ptr<HfTokenizer> HfTokenizer::from_directory(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) {
    throw Error("tokenizer: " + dir.string() +
                " is not a directory (expected an HF tokenizer directory with tokenizer.json)");
  }
  const fs::path tokenizer_json = dir / "tokenizer.json";
  if (!fs::exists(tokenizer_json)) {
    if (fs::exists(dir / "encoder.json") && fs::exists(dir / "vocab.bpe")) {
      return from_gpt2_files(dir / "encoder.json", dir / "vocab.bpe");
    }
    if (fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt")) {
      return from_gpt2_files(dir / "vocab.json", dir / "merges.txt");
    }
    throw Error(
        "tokenizer: " + dir.string() +
        " has no tokenizer.json (nor GPT-2's encoder.json + vocab.bpe); point --tokenizer at "
        "an HF model or tokenizer directory");
  }
  const std::string text = read_file(tokenizer_json);
  std::string config;
  if (fs::exists(dir / "tokenizer_config.json")) config = read_file(dir / "tokenizer_config.json");
  auto tokenizer = from_json(text, config, tokenizer_json.string());
  tokenizer->parts_.directory = dir;
  return tokenizer;
}

}  // namespace vime::tokenizer
