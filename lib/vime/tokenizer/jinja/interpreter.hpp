// Runs a parsed template: Jinja2's runtime semantics with transformers' environment (sandboxed,
// immutable data, Undefined that prints as "" and fails on use). One Interpreter per render.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vime/tokenizer/jinja/ast.hpp"
#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {

class Interpreter {
 public:
  // `context` holds the render variables (messages, tools, add_generation_prompt, ...).
  explicit Interpreter(const Dict& context) : context_(context) {}

  std::string render(const Body& body);

  // Used by builtins: call a callable, apply a filter or test by name, Jinja's getattr / getitem.
  Value call(const Value& callee, CallArgs& args);
  Value apply_filter(std::string_view name, CallArgs& args);
  bool apply_test(std::string_view name, CallArgs& args);
  Value get_attribute(const Value& object, std::string_view name);
  Value get_item(const Value& object, const Value& key);

 private:
  struct Scope {
    std::unordered_map<std::string, Value> vars;
    std::shared_ptr<Scope> parent;
  };
  using ScopePtr = std::shared_ptr<Scope>;
  enum class Flow { kNormal, kBreak, kContinue };

  Flow exec(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec_stmt(const Stmt& stmt, const ScopePtr& scope, std::string& out);
  Flow exec_for(const ForStmt& stmt, const ScopePtr& scope, std::string& out);
  void run_loop(const ForStmt& stmt, List items, const ScopePtr& scope, std::string& out,
                int64_t depth);
  struct LoopFrame;
  Value loop_object(const std::shared_ptr<LoopFrame>& frame, int64_t i);
  void exec_set(const SetStmt& stmt, const ScopePtr& scope);
  Value render_filtered(const Body& body, const std::vector<std::unique_ptr<FilterExpr>>& filters,
                        const ScopePtr& scope);
  void assign(const Expr& target, Value value, const ScopePtr& scope);
  Value make_macro(const MacroStmt& stmt, const ScopePtr& scope);
  Value call_macro(const MacroStmt& stmt, const ScopePtr& defining_scope, CallArgs& args,
                   const Value* caller);

  Value eval(const Expr& expr, const ScopePtr& scope);
  Value eval_inner(const Expr& expr, const ScopePtr& scope);
  Value eval_binary(const BinaryExpr& expr, const ScopePtr& scope);
  Value eval_compare(const CompareExpr& expr, const ScopePtr& scope);
  CallArgs eval_args(const Arguments& args, const ScopePtr& scope);
  Value lookup(const std::string& name, const ScopePtr& scope) const;

  void check_stack() const;

  const Dict& context_;
  std::uintptr_t stack_base_ = 0;  // where render() began on the stack
  int call_depth_ = 0;
  std::vector<ScopePtr> macro_scopes_;  // scopes that define macros, alive until the render ends
};

// The items a for loop visits: list/tuple items, dict keys, string characters; Undefined is empty.
List iterate(const Value& v);
// Python's slicing of a list, tuple or str.
Value slice(const Value& v, const Value& start, const Value& stop, const Value& step);

}  // namespace vime::tokenizer::jinja
