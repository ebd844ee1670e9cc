// The values a template computes with, modelled on the Python objects Jinja2 sees in transformers:
// None, bool, int, float, str, list, tuple, dict (insertion-ordered), namespace, callables, and
// Jinja's Undefined. Lists and dicts are shared (Python reference semantics); the sandbox never
// mutates them, only namespaces change in place.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace vime::tokenizer::jinja {

class Value;
class Interpreter;
using List = std::vector<Value>;

// A Python dict: keys keep insertion order (json.loads order), lookups are linear (chat messages
// and tool schemas have a handful of keys).
struct Dict {
  std::vector<std::pair<Value, Value>> items;
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(Value key, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // Removes and returns keyword `name`, else positional `index`, else nullptr-like Undefined.
  const Value* keyword_arg(std::string_view name) const;
};

struct Callable {
  std::string name;
  std::function<Value(Interpreter&, CallArgs&)> call;
  // Attributes of a callable object: a loop is callable (recursive loops) and has loop.index, ...
  // Returns an Undefined without hint for a name it does not have. May be empty.
  std::function<Value(std::string_view)> attribute;
};

class Value {
 public:
  enum class Kind {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kTuple,
    kDict,
    kNamespace,
    kCallable
  };

  Value() : kind_(Kind::kUndefined) {}
  static Value undefined(std::string hint = {});  // hint: "'x' is undefined" for error messages
  static Value none() { return Value(Kind::kNone, std::monostate{}); }
  Value(bool v) : kind_(Kind::kBool), data_(v) {}
  Value(int v) : kind_(Kind::kInt), data_(static_cast<int64_t>(v)) {}
  Value(int64_t v) : kind_(Kind::kInt), data_(v) {}
  Value(size_t v) : kind_(Kind::kInt), data_(static_cast<int64_t>(v)) {}
  Value(double v) : kind_(Kind::kFloat), data_(v) {}
  // Strings are shared, as Python's are: reading message.content does not copy the text.
  Value(const char* v) : Value(std::string(v)) {}
  Value(std::string v)
      : kind_(Kind::kString), data_(std::make_shared<const std::string>(std::move(v))) {}
  Value(std::string_view v) : Value(std::string(v)) {}
  static Value list(List items);
  static Value tuple(List items);
  static Value dict(Dict d = {});
  static Value namespace_object(Dict attributes);
  static Value callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn,
                        std::function<Value(std::string_view)> attribute = nullptr);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const {
    return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool;
  }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_sequence() const { return kind_ == Kind::kList || kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }
  bool is_callable() const { return kind_ == Kind::kCallable; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  double to_double() const;  // int, bool or float as a double
  const std::string& as_string() const { return *std::get<SharedString>(data_); }
  const List& as_list() const { return *std::get<std::shared_ptr<List>>(data_); }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  Dict& namespace_attributes() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<Callable>>(data_); }
  const std::string& undefined_hint() const;

  // Python's type name ("str", "dict", "NoneType", ...), for error messages as Python writes them.
  std::string type_name() const;
  bool truthy() const;                      // Python's bool(); Undefined is false
  std::string str() const;                  // Python's str(); Undefined prints as ""
  void append_str(std::string& out) const;  // out += str(), without a copy for strings
  std::string repr() const;                 // Python's repr()
  size_t length() const;                    // len(); throws for types without one

  friend bool operator==(const Value& a, const Value& b);  // Python ==, 1 == 1.0 == True

 private:
  using SharedString = std::shared_ptr<const std::string>;
  using Data =
      std::variant<std::monostate, bool, int64_t, double, SharedString, std::shared_ptr<List>,
                   std::shared_ptr<Dict>, std::shared_ptr<Callable>>;
  Value(Kind kind, Data data) : kind_(kind), data_(std::move(data)) {}
  Kind kind_;
  Data data_;
};

// Python's ordering for <, <=, >, >=: numbers with numbers, strings with strings, sequences
// element-wise. Returns <0, 0, >0; throws TypeError text via RenderError for other pairs.
int compare(const Value& a, const Value& b);

}  // namespace vime::tokenizer::jinja
