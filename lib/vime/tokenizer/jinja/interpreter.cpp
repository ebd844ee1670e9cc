#include "vime/tokenizer/jinja/interpreter.hpp"

#include <algorithm>
#include <optional>

#include "vime/tokenizer/jinja/builtins.hpp"
#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/operators.hpp"
#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {
namespace {

// Macro recursion past this raises instead of overflowing the stack.
constexpr int kMaxCallDepth = 200;
// However deep macros, loops and expressions nest, rendering uses at most this much stack (thread
// stacks are 8 MiB by default on Linux) and raises RecursionError beyond it.
constexpr std::ptrdiff_t kMaxStackBytes = 2 << 20;

// Jinja2's Undefined messages: "'dict object' has no attribute 'x'",
// "list object has no element 0".
Value missing_attribute(const Value& object, const Value& name) {
  std::string type = object.is_none() ? "None" : object.type_name() + " object";
  if (!name.is_string()) return Value::undefined(type + " has no element " + name.repr());
  return Value::undefined("'" + type + "' has no attribute " + name.repr());
}

int64_t integer_index(const Value& v) { return v.is_bool() ? int64_t{v.as_bool()} : v.as_int(); }

}  // namespace

List iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return {};
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      return v.as_list();
    case Value::Kind::kDict: {
      List keys;
      for (const auto& [k, _] : v.as_dict().items) keys.push_back(k);
      return keys;
    }
    case Value::Kind::kString: {
      List chars;
      const std::string& s = v.as_string();
      for (size_t pos = 0; pos < s.size();) {
        size_t start = pos;
        utf8::next(s, pos);
        chars.emplace_back(s.substr(start, pos - start));
      }
      return chars;
    }
    default:
      throw type_error("'" + v.type_name() + "' object is not iterable");
  }
}

Value slice(const Value& v, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto as_opt = [](const Value& x, const char* what) -> std::optional<int64_t> {
    if (x.is_none() || x.is_undefined()) return std::nullopt;
    if (!x.is_int() && !x.is_bool())
      throw type_error(std::string("slice ") + what + " must be an integer or None");
    return integer_index(x);
  };
  int64_t step = as_opt(step_v, "indices").value_or(1);
  if (step == 0) throw TemplateError("ValueError", "slice step cannot be zero");
  std::vector<size_t> offsets;
  int64_t length;
  if (v.is_string()) {
    offsets = utf8::offsets(v.as_string());
    length = static_cast<int64_t>(offsets.size()) - 1;
  } else if (v.is_sequence()) {
    length = static_cast<int64_t>(v.as_list().size());
  } else if (v.is_undefined()) {
    fail_undefined(v);
  } else {
    throw type_error("'" + v.type_name() + "' object is not subscriptable");
  }
  auto clamp = [&](std::optional<int64_t> x, int64_t if_missing) {
    if (!x) return if_missing;
    int64_t i = *x < 0 ? *x + length : *x;
    if (step > 0) return std::clamp<int64_t>(i, 0, length);
    return std::clamp<int64_t>(i, -1, length - 1);
  };
  int64_t start = clamp(as_opt(start_v, "indices"), step > 0 ? 0 : length - 1);
  int64_t stop = clamp(as_opt(stop_v, "indices"), step > 0 ? length : -1);
  std::vector<int64_t> picked;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) picked.push_back(i);
  if (v.is_string()) {
    const std::string& s = v.as_string();
    std::string out;
    for (int64_t i : picked) out.append(s, offsets[i], offsets[i + 1] - offsets[i]);
    return Value(std::move(out));
  }
  List out;
  for (int64_t i : picked) out.push_back(v.as_list()[i]);
  return v.kind() == Value::Kind::kTuple ? Value::tuple(std::move(out))
                                         : Value::list(std::move(out));
}

void Interpreter::check_stack() const {
  char here;
  auto used = static_cast<std::ptrdiff_t>(stack_base_ - reinterpret_cast<std::uintptr_t>(&here));
  if (used > kMaxStackBytes || used < -kMaxStackBytes) {
    throw TemplateError("RecursionError",
                        "maximum recursion depth exceeded (the template nests too deeply)");
  }
}

std::string Interpreter::render(const Body& body) {
  char base;
  stack_base_ = reinterpret_cast<std::uintptr_t>(&base);
  auto root = std::make_shared<Scope>();
  std::string out;
  exec(body, root, out);
  return out;
}

// --- statements

Interpreter::Flow Interpreter::exec(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& stmt : body) {
    Flow flow = exec_stmt(*stmt, scope, out);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

// The body of {% set x | f %}...{% endset %} or {% filter f %}...{% endfilter %}: rendered in its
// own scope, then passed through the filters in order.
Value Interpreter::render_filtered(const Body& body,
                                   const std::vector<std::unique_ptr<FilterExpr>>& filters,
                                   const ScopePtr& scope) {
  std::string text;
  exec(body, std::make_shared<Scope>(Scope{{}, scope}), text);
  Value value(std::move(text));
  for (const auto& filter : filters) {
    CallArgs args = eval_args(filter->args, scope);
    args.positional.insert(args.positional.begin(), value);
    value = apply_filter(filter->name, args);
  }
  return value;
}

Interpreter::Flow Interpreter::exec_stmt(const Stmt& stmt, const ScopePtr& scope,
                                         std::string& out) {
  try {
    check_stack();
    switch (stmt.kind) {
      case Stmt::Kind::kOutput:
        out += static_cast<const OutputStmt&>(stmt).text;
        return Flow::kNormal;
      case Stmt::Kind::kPrint:
        eval(*static_cast<const PrintStmt&>(stmt).expr, scope).append_str(out);
        return Flow::kNormal;
      case Stmt::Kind::kIf: {
        const auto& s = static_cast<const IfStmt&>(stmt);
        for (const auto& [condition, body] : s.branches) {
          if (eval(*condition, scope).truthy()) return exec(body, scope, out);
        }
        return exec(s.otherwise, scope, out);
      }
      case Stmt::Kind::kFor:
        return exec_for(static_cast<const ForStmt&>(stmt), scope, out);
      case Stmt::Kind::kSet:
        exec_set(static_cast<const SetStmt&>(stmt), scope);
        return Flow::kNormal;
      case Stmt::Kind::kSetBlock: {
        const auto& s = static_cast<const SetBlockStmt&>(stmt);
        Value value = render_filtered(s.body, s.filters, scope);
        assign(*s.target, std::move(value), scope);
        return Flow::kNormal;
      }
      case Stmt::Kind::kMacro: {
        const auto& s = static_cast<const MacroStmt&>(stmt);
        scope->vars[s.name] = make_macro(s, scope);
        return Flow::kNormal;
      }
      case Stmt::Kind::kCallBlock: {
        const auto& s = static_cast<const CallBlockStmt&>(stmt);
        const auto& call = static_cast<const CallExpr&>(*s.call);
        // The body becomes `caller`, a macro the called macro can invoke.
        Value callee = eval(*call.callee, scope);
        CallArgs args = eval_args(call.args, scope);
        Value caller =
            Value::callable("caller", [this, &s, scope](Interpreter&, CallArgs& caller_args) {
              auto local = std::make_shared<Scope>(Scope{{}, scope});
              for (size_t i = 0; i < s.caller_parameters.size(); ++i) {
                const Parameter& p = s.caller_parameters[i];
                Value v = i < caller_args.positional.size() ? caller_args.positional[i]
                          : caller_args.keyword_arg(p.name) ? *caller_args.keyword_arg(p.name)
                          : p.default_value                 ? eval(*p.default_value, local)
                                            : Value::undefined("'" + p.name + "' is undefined");
                local->vars[p.name] = std::move(v);
              }
              std::string text;
              exec(s.body, local, text);
              return Value(std::move(text));
            });
        args.keyword.emplace_back("caller", caller);
        out += this->call(callee, args).str();
        return Flow::kNormal;
      }
      case Stmt::Kind::kFilterBlock: {
        const auto& s = static_cast<const FilterBlockStmt&>(stmt);
        Value value = render_filtered(s.body, s.filters, scope);
        out += value.str();
        return Flow::kNormal;
      }
      case Stmt::Kind::kWith: {
        const auto& s = static_cast<const WithStmt&>(stmt);
        auto local = std::make_shared<Scope>(Scope{{}, scope});
        for (const auto& [target, value] : s.assignments)
          assign(*target, eval(*value, scope), local);
        return exec(s.body, local, out);
      }
      case Stmt::Kind::kScope: {
        exec(static_cast<const ScopeStmt&>(stmt).body, std::make_shared<Scope>(Scope{{}, scope}),
             out);
        return Flow::kNormal;
      }
      case Stmt::Kind::kBreak:
        return Flow::kBreak;
      case Stmt::Kind::kContinue:
        return Flow::kContinue;
    }
  } catch (const TemplateError& e) {
    if (e.line() == 0) throw e.at_line(stmt.line);
    throw;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec_for(const ForStmt& stmt, const ScopePtr& scope,
                                        std::string& out) {
  run_loop(stmt, iterate(eval(*stmt.iterable, scope)), scope, out, 1);
  return Flow::kNormal;
}

// One run of a for loop: what `loop` answers for each iteration.
struct Interpreter::LoopFrame {
  const ForStmt* stmt;
  ScopePtr scope;  // the loop's enclosing scope, for recursive calls
  List items;
  int64_t depth;
  std::optional<List> last_changed;  // loop.changed()'s memory
};

// `loop` of iteration i: attributes computed on access; calling it (recursive loops) renders the
// body again one level deeper.
Value Interpreter::loop_object(const std::shared_ptr<LoopFrame>& frame, int64_t i) {
  auto attribute = [frame, i](std::string_view name) -> Value {
    const int64_t length = static_cast<int64_t>(frame->items.size());
    if (name == "index") return Value(i + 1);
    if (name == "index0") return Value(i);
    if (name == "revindex") return Value(length - i);
    if (name == "revindex0") return Value(length - i - 1);
    if (name == "first") return Value(i == 0);
    if (name == "last") return Value(i == length - 1);
    if (name == "length") return Value(length);
    if (name == "depth") return Value(frame->depth);
    if (name == "depth0") return Value(frame->depth - 1);
    if (name == "previtem")
      return i > 0 ? frame->items[i - 1] : Value::undefined("there is no previous item");
    if (name == "nextitem")
      return i + 1 < length ? frame->items[i + 1] : Value::undefined("there is no next item");
    if (name == "cycle") {
      return Value::callable("cycle", [i](Interpreter&, CallArgs& args) -> Value {
        if (args.positional.empty()) throw type_error("no items for cycling given");
        return args.positional[i % args.positional.size()];
      });
    }
    if (name == "changed") {
      return Value::callable("changed", [frame](Interpreter&, CallArgs& args) -> Value {
        if (frame->last_changed && *frame->last_changed == args.positional) return Value(false);
        frame->last_changed = args.positional;
        return Value(true);
      });
    }
    return Value();
  };
  auto call = [frame](Interpreter& in, CallArgs& args) -> Value {
    if (!frame->stmt->recursive)
      throw type_error("The loop must have the 'recursive' marker to be called recursively.");
    if (args.positional.size() != 1) throw type_error("loop() takes exactly one argument");
    if (++in.call_depth_ > kMaxCallDepth) {
      --in.call_depth_;
      throw TemplateError("RecursionError", "maximum recursion depth exceeded in a recursive loop");
    }
    std::string text;
    try {
      in.run_loop(*frame->stmt, iterate(args.positional[0]), frame->scope, text, frame->depth + 1);
    } catch (...) {
      --in.call_depth_;
      throw;
    }
    --in.call_depth_;
    return Value(std::move(text));
  };
  return Value::callable("loop", std::move(call), std::move(attribute));
}

void Interpreter::run_loop(const ForStmt& stmt, List items, const ScopePtr& scope, std::string& out,
                           int64_t depth) {
  if (stmt.filter) {
    List kept;
    for (Value& item : items) {
      auto local = std::make_shared<Scope>(Scope{{}, scope});
      assign(*stmt.target, item, local);
      if (eval(*stmt.filter, local).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec(stmt.otherwise, std::make_shared<Scope>(Scope{{}, scope}), out);
    return;
  }
  auto frame =
      std::make_shared<LoopFrame>(LoopFrame{&stmt, scope, std::move(items), depth, std::nullopt});
  const int64_t length = static_cast<int64_t>(frame->items.size());
  for (int64_t i = 0; i < length; ++i) {
    // Each iteration starts from the enclosing scope: a {% set %} in the body does not carry over.
    auto local = std::make_shared<Scope>(Scope{{}, scope});
    local->vars["loop"] = loop_object(frame, i);
    assign(*stmt.target, frame->items[i], local);
    if (exec(stmt.body, local, out) == Flow::kBreak) break;
  }
}

void Interpreter::assign(const Expr& target, Value value, const ScopePtr& scope) {
  if (target.kind == Expr::Kind::kName) {
    scope->vars[static_cast<const NameExpr&>(target).name] = std::move(value);
    return;
  }
  if (target.kind == Expr::Kind::kTuple) {
    const auto& names = static_cast<const SequenceExpr&>(target).items;
    if (!value.is_string() && !value.is_sequence() && !value.is_dict() && !value.is_undefined()) {
      throw type_error("cannot unpack non-iterable " + value.type_name() + " object");
    }
    List values = iterate(value);
    if (values.size() > names.size()) {
      throw TemplateError("ValueError", "too many values to unpack (expected " +
                                            std::to_string(names.size()) + ")");
    }
    if (values.size() < names.size()) {
      throw TemplateError("ValueError", "not enough values to unpack (expected " +
                                            std::to_string(names.size()) + ", got " +
                                            std::to_string(values.size()) + ")");
    }
    for (size_t i = 0; i < names.size(); ++i) assign(*names[i], std::move(values[i]), scope);
    return;
  }
  if (target.kind == Expr::Kind::kAttr) {
    const auto& attr = static_cast<const AttrExpr&>(target);
    Value object = eval(*attr.object, scope);
    if (!object.is_namespace()) {
      throw TemplateError("TemplateRuntimeError",
                          "cannot assign attribute on non-namespace object");
    }
    object.namespace_attributes().set(Value(attr.name), std::move(value));
    return;
  }
  throw TemplateError("TemplateSyntaxError", "can't assign to this expression");
}

void Interpreter::exec_set(const SetStmt& stmt, const ScopePtr& scope) {
  assign(*stmt.target, eval(*stmt.value, scope), scope);
}

Value Interpreter::make_macro(const MacroStmt& stmt, const ScopePtr& scope) {
  // The macro sees its defining scope live (later {% set %}s there too, as in Jinja2). It holds
  // that scope weakly, since the scope holds the macro; the interpreter keeps it for the render.
  macro_scopes_.push_back(scope);
  std::weak_ptr<Scope> weak_scope = scope;
  return Value::callable(stmt.name, [&stmt, weak_scope](Interpreter& in, CallArgs& args) {
    ScopePtr defining_scope = weak_scope.lock();
    if (!defining_scope)
      throw TemplateError("TemplateRuntimeError",
                          "macro '" + stmt.name + "' called after its render ended");
    const Value* caller = args.keyword_arg("caller");
    return in.call_macro(stmt, defining_scope, args, caller);
  });
}

Value Interpreter::call_macro(const MacroStmt& stmt, const ScopePtr& defining_scope, CallArgs& args,
                              const Value* caller) {
  if (++call_depth_ > kMaxCallDepth) {
    --call_depth_;
    throw TemplateError("RecursionError",
                        "maximum recursion depth exceeded in macro '" + stmt.name + "'");
  }
  struct Exit {
    int& depth;
    ~Exit() { --depth; }
  } exit{call_depth_};
  auto local = std::make_shared<Scope>(Scope{{}, defining_scope});
  const auto& params = stmt.parameters;
  for (size_t i = 0; i < params.size(); ++i) {
    const Value* keyword = args.keyword_arg(params[i].name);
    if (i < args.positional.size()) {
      if (keyword)
        throw type_error("macro '" + stmt.name + "' got multiple values for argument '" +
                         params[i].name + "'");
      local->vars[params[i].name] = args.positional[i];
    } else if (keyword) {
      local->vars[params[i].name] = *keyword;
    } else if (params[i].default_value) {
      local->vars[params[i].name] = eval(*params[i].default_value, local);
    } else {
      local->vars[params[i].name] =
          Value::undefined("parameter '" + params[i].name + "' was not provided");
    }
  }
  List varargs;
  for (size_t i = params.size(); i < args.positional.size(); ++i)
    varargs.push_back(args.positional[i]);
  Dict kwargs;
  for (const auto& [name, value] : args.keyword) {
    if (name == "caller") continue;
    bool is_param = false;
    for (const auto& p : params) is_param = is_param || p.name == name;
    if (!is_param) kwargs.set(Value(name), value);
  }
  local->vars["varargs"] = Value::tuple(std::move(varargs));
  local->vars["kwargs"] = Value::dict(std::move(kwargs));
  if (caller) local->vars["caller"] = *caller;
  std::string out;
  exec(stmt.body, local, out);
  return Value(std::move(out));
}

// --- expressions

Value Interpreter::lookup(const std::string& name, const ScopePtr& scope) const {
  for (const Scope* s = scope.get(); s != nullptr; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return it->second;
  }
  if (const Value* v = context_.find(std::string_view(name))) return *v;
  Value global = find_global(name);
  if (!global.is_undefined()) return global;
  return Value::undefined("'" + name + "' is undefined");
}

Value Interpreter::eval(const Expr& expr, const ScopePtr& scope) {
  try {
    check_stack();
    return eval_inner(expr, scope);
  } catch (const TemplateError& e) {
    if (e.line() == 0) throw e.at_line(expr.line);
    throw;
  }
}

CallArgs Interpreter::eval_args(const Arguments& args, const ScopePtr& scope) {
  CallArgs out;
  for (const auto& e : args.positional) out.positional.push_back(eval(*e, scope));
  for (const auto& [name, e] : args.keyword) out.keyword.emplace_back(name, eval(*e, scope));
  return out;
}

Value Interpreter::eval_inner(const Expr& expr, const ScopePtr& scope) {
  switch (expr.kind) {
    case Expr::Kind::kLiteral:
      return static_cast<const LiteralExpr&>(expr).value;
    case Expr::Kind::kName:
      return lookup(static_cast<const NameExpr&>(expr).name, scope);
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      List items;
      for (const auto& e : static_cast<const SequenceExpr&>(expr).items)
        items.push_back(eval(*e, scope));
      return expr.kind == Expr::Kind::kList ? Value::list(std::move(items))
                                            : Value::tuple(std::move(items));
    }
    case Expr::Kind::kDict: {
      Dict d;
      for (const auto& [k, v] : static_cast<const DictExpr&>(expr).items)
        d.set(eval(*k, scope), eval(*v, scope));
      return Value::dict(std::move(d));
    }
    case Expr::Kind::kAttr: {
      const auto& e = static_cast<const AttrExpr&>(expr);
      return get_attribute(eval(*e.object, scope), e.name);
    }
    case Expr::Kind::kItem: {
      const auto& e = static_cast<const ItemExpr&>(expr);
      Value object = eval(*e.object, scope);
      if (e.index->kind == Expr::Kind::kSlice) {
        const auto& s = static_cast<const SliceExpr&>(*e.index);
        auto part = [&](const ExprPtr& p) { return p ? eval(*p, scope) : Value::none(); };
        return slice(object, part(s.start), part(s.stop), part(s.step));
      }
      return get_item(object, eval(*e.index, scope));
    }
    case Expr::Kind::kSlice:
      throw TemplateError("TemplateSyntaxError", "a slice outside a subscript");
    case Expr::Kind::kCall: {
      const auto& e = static_cast<const CallExpr&>(expr);
      Value callee = eval(*e.callee, scope);
      CallArgs args = eval_args(e.args, scope);
      return call(callee, args);
    }
    case Expr::Kind::kFilter: {
      const auto& e = static_cast<const FilterExpr&>(expr);
      CallArgs args;
      args.positional.push_back(eval(*e.operand, scope));
      CallArgs rest = eval_args(e.args, scope);
      args.positional.insert(args.positional.end(), rest.positional.begin(), rest.positional.end());
      args.keyword = std::move(rest.keyword);
      return apply_filter(e.name, args);
    }
    case Expr::Kind::kTest: {
      const auto& e = static_cast<const TestExpr&>(expr);
      CallArgs args;
      args.positional.push_back(eval(*e.operand, scope));
      CallArgs rest = eval_args(e.args, scope);
      args.positional.insert(args.positional.end(), rest.positional.begin(), rest.positional.end());
      args.keyword = std::move(rest.keyword);
      return Value(apply_test(e.name, args));
    }
    case Expr::Kind::kUnary: {
      const auto& e = static_cast<const UnaryExpr&>(expr);
      Value v = eval(*e.operand, scope);
      if (e.op == "not") return Value(!v.truthy());
      return negate(v, e.op == "-");
    }
    case Expr::Kind::kBinary:
      return eval_binary(static_cast<const BinaryExpr&>(expr), scope);
    case Expr::Kind::kCompare:
      return eval_compare(static_cast<const CompareExpr&>(expr), scope);
    case Expr::Kind::kCondition: {
      const auto& e = static_cast<const ConditionExpr&>(expr);
      if (eval(*e.condition, scope).truthy()) return eval(*e.then, scope);
      if (e.otherwise) return eval(*e.otherwise, scope);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return Value();
}

Value Interpreter::eval_binary(const BinaryExpr& expr, const ScopePtr& scope) {
  Value left = eval(*expr.left, scope);
  if (expr.op == "and") return left.truthy() ? eval(*expr.right, scope) : left;
  if (expr.op == "or") return left.truthy() ? left : eval(*expr.right, scope);
  return binary_operation(expr.op, left, eval(*expr.right, scope));
}

Value Interpreter::eval_compare(const CompareExpr& expr, const ScopePtr& scope) {
  Value left = eval(*expr.first, scope);
  for (const auto& [op, right_expr] : expr.rest) {
    Value right = eval(*right_expr, scope);
    bool ok;
    if (op == "==")
      ok = left == right;
    else if (op == "!=")
      ok = !(left == right);
    else if (op == "in")
      ok = contains(right, left);
    else if (op == "notin")
      ok = !contains(right, left);
    else {
      if (left.is_undefined()) fail_undefined(left);
      if (right.is_undefined()) fail_undefined(right);
      int c;
      try {
        c = compare(left, right);
      } catch (const TemplateError&) {
        throw type_error("'" + op + "' not supported between instances of '" + left.type_name() +
                         "' and '" + right.type_name() + "'");
      }
      ok = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    }
    if (!ok) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) fail_undefined(callee);
  if (!callee.is_callable())
    throw type_error("'" + callee.type_name() + "' object is not callable");
  return callee.as_callable().call(*this, args);
}

Value Interpreter::apply_filter(std::string_view name, CallArgs& args) {
  Builtin filter = find_filter(name);
  if (filter == nullptr)
    throw TemplateError("TemplateAssertionError", "No filter named '" + std::string(name) + "'.");
  return filter(*this, args);
}

bool Interpreter::apply_test(std::string_view name, CallArgs& args) {
  TestFn test = find_test(name);
  if (test == nullptr)
    throw TemplateError("TemplateRuntimeError", "No test named '" + std::string(name) + "'.");
  return test(*this, args);
}

Value Interpreter::get_attribute(const Value& object, std::string_view name) {
  switch (object.kind()) {
    case Value::Kind::kUndefined:
      fail_undefined(object);
    case Value::Kind::kDict: {
      Value method = find_method(object, name);
      if (!is_no_method(method)) return method;
      if (const Value* v = object.as_dict().find(name)) return *v;
      break;
    }
    case Value::Kind::kNamespace:
      if (const Value* v = object.namespace_attributes().find(name)) return *v;
      break;
    case Value::Kind::kTuple:  // groupby's (grouper, list) pairs are named tuples in Jinja2
      if (object.as_list().size() == 2 && (name == "grouper" || name == "list"))
        return object.as_list()[name == "list"];
      break;
    case Value::Kind::kCallable:
      if (const auto& attribute = object.as_callable().attribute) {
        Value v = attribute(name);
        if (!(v.is_undefined() && v.undefined_hint().empty())) return v;
      }
      break;
    default: {
      Value method = find_method(object, name);
      if (!is_no_method(method)) return method;
    }
  }
  return missing_attribute(object, Value(name));
}

Value Interpreter::get_item(const Value& object, const Value& key) {
  switch (object.kind()) {
    case Value::Kind::kUndefined:
      fail_undefined(object);
    case Value::Kind::kDict:
      if (const Value* v = object.as_dict().find(key)) return *v;
      break;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
    case Value::Kind::kString:
      if (key.is_int() || key.is_bool()) {
        int64_t length = static_cast<int64_t>(object.length());
        int64_t i = integer_index(key);
        if (i < 0) i += length;
        if (i < 0 || i >= length) break;
        if (object.is_string()) return slice(object, Value(i), Value(i + 1), Value::none());
        return object.as_list()[i];
      }
      break;
    default:
      break;
  }
  if (key.is_string()) return get_attribute(object, key.as_string());
  return missing_attribute(object, key);
}

}  // namespace vime::tokenizer::jinja
