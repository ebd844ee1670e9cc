// vime::Json: the JSON value of the public API (labels, metadata, rewards that are dicts, plugin
// config). A plain value type (copyable, comparable); parsing and printing use RapidJSON inside
// libvime.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace vime {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::map<std::string, Json, std::less<>>;
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool v) : value_(v) {}
  Json(int v) : value_(static_cast<int64_t>(v)) {}
  Json(int64_t v) : value_(v) {}
  Json(double v) : value_(v) {}
  Json(const char* v) : value_(std::string(v)) {}
  Json(std::string v) : value_(std::move(v)) {}
  Json(std::string_view v) : value_(std::string(v)) {}
  Json(Array v) : value_(std::move(v)) {}
  Json(Object v) : value_(std::move(v)) {}
  template <class T>
  Json(const std::vector<T>& values) : value_(Array(values.begin(), values.end())) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }
  // Throws vime::Error naming `where` (a file:line, a flag) when `text` is not valid JSON.
  static Json parse(std::string_view text, std::string_view where = "JSON text");

  Type type() const { return static_cast<Type>(value_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_int() const { return type() == Type::kInt; }
  bool is_number() const { return type() == Type::kInt || type() == Type::kDouble; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // Typed access; each throws vime::Error saying what was expected and what was found.
  bool as_bool() const;
  int64_t as_int() const;    // an integral double (2.0) is accepted
  double as_double() const;  // ints convert
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Object& as_object() const;
  Object& as_object();

  // Object access. `at` throws on a missing key; `find` returns nullptr; `operator[]` inserts
  // (turning a null into an object), like Python's dict assignment.
  const Json& at(std::string_view key) const;
  const Json* find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  Json& operator[](std::string_view key);
  // Array access.
  const Json& at(size_t index) const;
  void push_back(Json v);
  size_t size() const;  // elements of an array or object, 0 otherwise

  // Compact JSON (Python's json.dumps with separators (",", ":") would differ only in spacing);
  // `indent` > 0 pretty-prints. Non-ASCII is written as UTF-8, not escaped.
  std::string dump(int indent = 0) const;
  const char* type_name() const;

  friend bool operator==(const Json& a, const Json& b) { return a.value_ == b.value_; }

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, Array, Object> value_;
};

}  // namespace vime
