#include "vime/tokenizer/jinja/value.hpp"

#include "vime/python_format.hpp"
#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/python_text.hpp"
#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k.is_string() && k.as_string() == key) return &v;
  }
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (auto& [k, v] : items) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  items.emplace_back(std::move(key), std::move(value));
}

const Value* CallArgs::keyword_arg(std::string_view name) const {
  for (const auto& [k, v] : keyword) {
    if (k == name) return &v;
  }
  return nullptr;
}

Value Value::undefined(std::string hint) {
  if (hint.empty()) return Value();
  return Value(Kind::kUndefined, std::make_shared<const std::string>(std::move(hint)));
}

const std::string& Value::undefined_hint() const {
  static const std::string kNone;
  const auto* hint = std::get_if<SharedString>(&data_);
  return hint != nullptr && *hint ? **hint : kNone;
}
Value Value::list(List items) {
  return Value(Kind::kList, std::make_shared<List>(std::move(items)));
}
Value Value::tuple(List items) {
  return Value(Kind::kTuple, std::make_shared<List>(std::move(items)));
}
Value Value::dict(Dict d) { return Value(Kind::kDict, std::make_shared<Dict>(std::move(d))); }
Value Value::namespace_object(Dict attributes) {
  return Value(Kind::kNamespace, std::make_shared<Dict>(std::move(attributes)));
}
Value Value::callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn,
                      std::function<Value(std::string_view)> attribute) {
  return Value(Kind::kCallable, std::make_shared<Callable>(Callable{std::move(name), std::move(fn),
                                                                    std::move(attribute)}));
}

double Value::to_double() const {
  switch (kind_) {
    case Kind::kBool:
      return as_bool() ? 1.0 : 0.0;
    case Kind::kInt:
      return static_cast<double>(as_int());
    case Kind::kFloat:
      return as_float();
    default:
      throw type_error("must be real number, not " + type_name());
  }
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return "list";
    case Kind::kTuple:
      return "tuple";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "Namespace";
    case Kind::kCallable:
      return "function";
  }
  return "object";
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return as_bool();
    case Kind::kInt:
      return as_int() != 0;
    case Kind::kFloat:
      return as_float() != 0.0;
    case Kind::kString:
      return !as_string().empty();
    case Kind::kList:
    case Kind::kTuple:
      return !as_list().empty();
    case Kind::kDict:
      return !as_dict().items.empty();
    default:
      return true;
  }
}

std::string Value::str() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "";
    case Kind::kString:
      return as_string();
    default:
      return repr();
  }
}

void Value::append_str(std::string& out) const {
  if (kind_ == Kind::kString) {
    out += as_string();
  } else if (kind_ != Kind::kUndefined) {
    out += repr();
  }
}

std::string Value::repr() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return as_bool() ? "True" : "False";
    case Kind::kInt:
      return std::to_string(as_int());
    case Kind::kFloat:
      return python_float_repr(as_float());
    case Kind::kString:
      return string_repr(as_string());
    case Kind::kList:
    case Kind::kTuple: {
      const List& items = as_list();
      std::string out = kind_ == Kind::kList ? "[" : "(";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        out += items[i].repr();
      }
      if (kind_ == Kind::kTuple && items.size() == 1) out += ",";
      return out + (kind_ == Kind::kList ? "]" : ")");
    }
    case Kind::kDict:
    case Kind::kNamespace: {
      const Dict& d = *std::get<std::shared_ptr<Dict>>(data_);
      std::string out = "{";
      for (size_t i = 0; i < d.items.size(); ++i) {
        if (i > 0) out += ", ";
        out += d.items[i].first.repr() + ": " + d.items[i].second.repr();
      }
      out += "}";
      return kind_ == Kind::kDict ? out : "<Namespace " + out + ">";
    }
    case Kind::kCallable:
      return "<function " + as_callable().name + ">";
  }
  return "";
}

size_t Value::length() const {
  switch (kind_) {
    case Kind::kUndefined:
      return 0;
    case Kind::kString:
      return utf8::count(as_string());
    case Kind::kList:
    case Kind::kTuple:
      return as_list().size();
    case Kind::kDict:
      return as_dict().items.size();
    default:
      throw type_error("object of type '" + type_name() + "' has no len()");
  }
}

bool operator==(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
    auto as_integer = [](const Value& v) {
      return v.is_bool() ? int64_t{v.as_bool()} : v.as_int();
    };
    return as_integer(a) == as_integer(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.as_string() == b.as_string();
    case Kind::kList:
    case Kind::kTuple:
      return a.as_list() == b.as_list();
    case Kind::kDict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* other = y.find(k);
        if (other == nullptr || !(*other == v)) return false;
      }
      return true;
    }
    case Kind::kNamespace:
      return &a.namespace_attributes() == &b.namespace_attributes();
    case Kind::kCallable:
      return &a.as_callable() == &b.as_callable();
    default:
      return false;
  }
}

int compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) {
      auto as_integer = [](const Value& v) {
        return v.is_bool() ? int64_t{v.as_bool()} : v.as_int();
      };
      int64_t x = as_integer(a), y = as_integer(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    double x = a.to_double(), y = b.to_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string())
    return a.as_string().compare(b.as_string()) < 0 ? -1 : a.as_string() == b.as_string() ? 0 : 1;
  if (a.kind() == b.kind() && a.is_sequence()) {
    const List& x = a.as_list();
    const List& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!(x[i] == y[i])) return compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  throw type_error("'<' not supported between instances of '" + a.type_name() + "' and '" +
                   b.type_name() + "'");
}

}  // namespace vime::tokenizer::jinja
