// ChatTemplate: transformers' apply_chat_template(tokenize=False) on our Jinja interpreter.
#include "vime/tokenizer/chat_template.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/json_value.hpp"
#include "vime/tokenizer/jinja/template.hpp"

namespace vime::tokenizer {
namespace {

using jinja::Dict;
using jinja::Value;

// transformers' special_tokens_map: the tokens that are set, as strings (an AddedToken's content).
Dict special_tokens_of(const Json& config) {
  Dict out;
  static constexpr const char* kNames[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                           "pad_token", "cls_token", "mask_token"};
  auto token_text = [](const Json& t) -> const Json* {
    if (t.is_string()) return &t;
    if (t.is_object()) return t.find("content");
    return nullptr;
  };
  for (const char* name : kNames) {
    const Json* t = config.find(name);
    if (t == nullptr) continue;
    if (const Json* text = token_text(*t); text && text->is_string())
      out.set(Value(name), Value(text->as_string()));
  }
  if (const Json* extra = config.find("additional_special_tokens");
      extra && extra->is_array() && extra->size() > 0) {
    jinja::List tokens;
    for (const Json& t : extra->as_array()) {
      if (const Json* text = token_text(t); text && text->is_string())
        tokens.emplace_back(text->as_string());
    }
    out.set(Value("additional_special_tokens"), Value::list(std::move(tokens)));
  }
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot read " + path.string() + ": check that the file exists and is readable");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

struct ChatTemplate::Impl {
  std::string origin;  // where the template came from, for error messages
  std::map<std::string, jinja::Template, std::less<>> templates;  // "" for a single template
  Dict special_tokens;

  const jinja::Template& pick(bool has_tools) const {
    if (templates.size() == 1) return templates.begin()->second;
    if (has_tools) {
      if (auto it = templates.find("tool_use"); it != templates.end()) return it->second;
    }
    if (auto it = templates.find("default"); it != templates.end()) return it->second;
    std::string names;
    for (const auto& [name, _] : templates) names += (names.empty() ? "" : ", ") + name;
    throw ChatTemplateError(origin + " has several chat templates (" + names +
                            ") and none is named 'default': pick one by name");
  }

  std::string render(const Value& messages, const Value& tools, bool add_generation_prompt,
                     const Value& kwargs) const {
    Dict context = special_tokens;
    context.set(Value("messages"), messages);
    context.set(Value("tools"), tools);
    context.set(Value("documents"), Value::none());
    context.set(Value("add_generation_prompt"), Value(add_generation_prompt));
    if (kwargs.is_dict()) {
      for (const auto& [k, v] : kwargs.as_dict().items) {
        if (k.is_string() && (k.as_string() == "messages" || k.as_string() == "tools" ||
                              k.as_string() == "add_generation_prompt")) {
          continue;  // the explicit arguments win
        }
        context.set(k, v);
      }
    } else if (!kwargs.is_none()) {
      throw ChatTemplateError("chat template kwargs must be a JSON object, not " +
                              kwargs.type_name());
    }
    const jinja::Template& t = pick(!tools.is_none());
    try {
      return t.render(context);
    } catch (const jinja::TemplateError& e) {
      throw ChatTemplateError(origin +
                              (e.line() > 0 ? " line " + std::to_string(e.line()) : std::string()) +
                              ": " + e.kind() + ": " + e.message());
    }
  }

  void add(std::string name, const std::string& source) {
    try {
      templates.emplace(std::move(name), jinja::Template(source));
    } catch (const jinja::TemplateError& e) {
      throw ChatTemplateError(origin + " line " + std::to_string(e.line()) + ": " + e.kind() +
                              ": " + e.message());
    }
  }
};

ChatTemplate::ChatTemplate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

ChatTemplate ChatTemplate::from_string(std::string source, const Json& special_tokens) {
  auto impl = std::make_unique<Impl>();
  impl->origin = "chat template";
  impl->special_tokens = special_tokens_of(special_tokens);
  impl->add("", source);
  return ChatTemplate(std::move(impl));
}

ChatTemplate ChatTemplate::from_directory(const std::filesystem::path& dir, std::string_view name) {
  auto impl = std::make_unique<Impl>();
  std::filesystem::path config_path = dir / "tokenizer_config.json";
  Json config = Json::object();
  if (std::filesystem::exists(config_path))
    config = Json::parse(read_file(config_path), config_path.string());
  impl->special_tokens = special_tokens_of(config);
  std::filesystem::path jinja_path = dir / "chat_template.jinja";
  if (std::filesystem::exists(jinja_path)) {
    impl->origin = jinja_path.string();
    impl->add("", read_file(jinja_path));
    return ChatTemplate(std::move(impl));
  }
  const Json* source = config.find("chat_template");
  if (source == nullptr || source->is_null()) {
    throw Error(
        "no chat template in " + dir.string() +
        ": expected chat_template.jinja or a \"chat_template\" entry in tokenizer_config.json");
  }
  impl->origin = config_path.string() + " chat_template";
  if (source->is_string()) {
    impl->add("", source->as_string());
  } else if (source->is_array()) {
    for (const Json& entry : source->as_array()) {
      const Json* entry_name = entry.find("name");
      const Json* entry_template = entry.find("template");
      if (!entry_name || !entry_name->is_string() || !entry_template ||
          !entry_template->is_string()) {
        throw Error(config_path.string() +
                    ": each chat_template entry needs string \"name\" and \"template\" fields");
      }
      if (!name.empty() && entry_name->as_string() != name) continue;
      impl->add(entry_name->as_string(), entry_template->as_string());
    }
    if (impl->templates.empty()) {
      throw Error(config_path.string() + " has no chat template named '" + std::string(name) + "'");
    }
  } else {
    throw Error(config_path.string() +
                ": \"chat_template\" must be a string or a list of {name, template}");
  }
  return ChatTemplate(std::move(impl));
}

std::string ChatTemplate::render(const Json& messages, const Json& tools,
                                 bool add_generation_prompt, const Json& kwargs) const {
  return impl_->render(jinja::value_from_json(messages), jinja::value_from_json(tools),
                       add_generation_prompt, jinja::value_from_json(kwargs));
}

std::string ChatTemplate::render_json(std::string_view messages, std::string_view tools,
                                      bool add_generation_prompt, std::string_view kwargs) const {
  return impl_->render(
      jinja::value_from_json_text(messages, "chat messages"),
      jinja::value_from_json_text(tools.empty() ? "null" : tools, "chat tools"),
      add_generation_prompt,
      jinja::value_from_json_text(kwargs.empty() ? "{}" : kwargs, "chat template kwargs"));
}

}  // namespace vime::tokenizer
