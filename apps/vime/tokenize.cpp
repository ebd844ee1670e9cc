// vime tokenize encode|decode|chat --tokenizer DIR --input IN.jsonl --output OUT.jsonl: run the
// tokenizer over JSONL, one object in, the same object plus the result out.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "commands.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/core/flags/command_flags.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/tokenizer/chat_request.hpp"
#include "vime/tokenizer/chat_template.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage =
    R"(usage: vime tokenize encode --tokenizer DIR --input IN.jsonl --output OUT.jsonl [--add-special-tokens]
       vime tokenize decode --tokenizer DIR --input IN.jsonl --output OUT.jsonl
       vime tokenize chat   --tokenizer DIR --input IN.jsonl --output OUT.jsonl

encode  lines {"text": ...}                        -> the line plus "ids"
decode  lines {"ids": [...], "skip_special_tokens": bool}  -> the line plus "text"
chat    lines {"messages": [...], "tools": [...] or null, "add_generation_prompt": bool, "kwargs": {...}}
        -> the line plus "text" (the rendered chat template), or plus "error" when the template raised
DIR is an HF tokenizer directory (tokenizer.json, tokenizer_config.json) or GPT-2's encoder.json + vocab.bpe.
)";

struct TokenizeOptions {
  std::string mode, tokenizer, input, output;
  bool add_special_tokens = false;

  // The flags of core::flags::tokenize_command(), checked: --input exists, --tokenizer is a
  // directory, --add-special-tokens only with encode.
  static TokenizeOptions from(const Args& args) {
    TokenizeOptions o;
    o.mode = args.get_string("mode");
    o.tokenizer = args.get_string("tokenizer");
    o.input = args.get_string("input");
    o.output = args.get_string("output");
    o.add_special_tokens = args.get_bool("add_special_tokens");
    if (o.add_special_tokens && o.mode != "encode") {
      throw UsageError("--add-special-tokens applies to vime tokenize encode only");
    }
    if (!std::filesystem::exists(o.input))
      throw UsageError("--input " + o.input + " does not exist");
    if (!std::filesystem::is_directory(o.tokenizer)) {
      throw UsageError("--tokenizer " + o.tokenizer + " is not a directory");
    }
    return o;
  }
};

const Json& field(const Json& line, const char* key, const std::string& where) {
  const Json* value = line.find(key);
  if (value == nullptr) throw Error(where + ": missing \"" + key + "\"");
  return *value;
}

// One output line for one input line (its text kept as it was, one key added); throws vime::Error
// naming `where` on bad input.
std::string process(const TokenizeOptions& o, const tokenizer::HfTokenizer& tok,
                    const std::string& text, const std::string& where) {
  if (o.mode == "chat") {
    const auto request = tokenizer::parse_chat_request(text, where);
    try {
      const std::string rendered =
          tok.apply_chat_template_json(request.messages_json, request.tools_json,
                                       request.add_generation_prompt, request.kwargs_json);
      return tokenizer::with_json_field(text, "text", Json(rendered).dump());
    } catch (const tokenizer::ChatTemplateError& e) {
      return tokenizer::with_json_field(text, "error", Json(e.what()).dump());
    }
  }
  const Json line = Json::parse(text, where);
  if (!line.is_object()) throw Error(where + ": expected a JSON object");
  if (o.mode == "encode") {
    const Json& input = field(line, "text", where);
    if (!input.is_string()) throw Error(where + ": \"text\" must be a string");
    return tokenizer::with_json_field(
        text, "ids", Json(tok.encode(input.as_string(), o.add_special_tokens)).dump());
  }
  const Json& ids_json = field(line, "ids", where);
  if (!ids_json.is_array()) throw Error(where + ": \"ids\" must be a list of token ids");
  std::vector<int32_t> ids;
  for (const Json& id : ids_json.as_array()) {
    if (!id.is_int()) throw Error(where + ": \"ids\" must be a list of token ids");
    ids.push_back(static_cast<int32_t>(id.as_int()));
  }
  const Json* skip = line.find("skip_special_tokens");
  if (skip != nullptr && !skip->is_bool())
    throw Error(where + ": \"skip_special_tokens\" must be true or false");
  return tokenizer::with_json_field(
      text, "text", Json(tok.decode(ids, skip != nullptr && skip->as_bool())).dump());
}

}  // namespace

int run_tokenize(const Arguments& argv) {
  const auto& flags = core::flags::tokenize_flags();
  if (auto code = help_exit_code(argv, kUsage, flags)) return *code;
  const auto o = TokenizeOptions::from(core::parse_args(argv, flags));
  const auto tok = tokenizer::HfTokenizer::from_directory(o.tokenizer);

  std::ifstream in(o.input, std::ios::binary);
  if (!in) throw UsageError("cannot read --input " + o.input);
  // Written beside the output and renamed at the end, so a failed run leaves no half file.
  std::optional<AtomicFile> out;
  try {
    out.emplace(o.output);
  } catch (const Error& e) {
    throw UsageError("cannot write --output " + o.output + " (" + e.what() + ")");
  }
  size_t count = 0;
  std::string text;
  for (size_t number = 1; std::getline(in, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = o.input + ":" + std::to_string(number);
    const std::string line = process(o, *tok, text, where) + "\n";
    out->write(line.data(), line.size());
    ++count;
  }
  out->commit();
  std::fprintf(stderr, "vime tokenize %s: %zu line(s) -> %s\n", o.mode.c_str(), count,
               o.output.c_str());
  return 0;
}

}  // namespace vime::app
