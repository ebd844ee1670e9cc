// The parsed template: expressions and statements, each with the template line it came from.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {

struct Expr {
  enum class Kind {
    kLiteral,
    kName,
    kList,
    kTuple,
    kDict,
    kAttr,
    kItem,
    kSlice,
    kCall,
    kFilter,
    kTest,
    kUnary,
    kBinary,
    kCompare,
    kCondition
  };
  Expr(Kind k, int l) : kind(k), line(l) {}
  virtual ~Expr() = default;
  Kind kind;
  int line;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct LiteralExpr : Expr {
  LiteralExpr(Value v, int l) : Expr(Kind::kLiteral, l), value(std::move(v)) {}
  Value value;
};
struct NameExpr : Expr {
  NameExpr(std::string n, int l) : Expr(Kind::kName, l), name(std::move(n)) {}
  std::string name;
};
struct SequenceExpr : Expr {  // [a, b] or (a, b)
  using Expr::Expr;
  std::vector<ExprPtr> items;
};
struct DictExpr : Expr {
  explicit DictExpr(int l) : Expr(Kind::kDict, l) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};
struct AttrExpr : Expr {  // object.name
  AttrExpr(ExprPtr o, std::string n, int l)
      : Expr(Kind::kAttr, l), object(std::move(o)), name(std::move(n)) {}
  ExprPtr object;
  std::string name;
};
struct ItemExpr : Expr {  // object[index]; index may be a SliceExpr
  ItemExpr(ExprPtr o, ExprPtr i, int l)
      : Expr(Kind::kItem, l), object(std::move(o)), index(std::move(i)) {}
  ExprPtr object;
  ExprPtr index;
};
struct SliceExpr : Expr {  // start:stop:step, each may be null
  explicit SliceExpr(int l) : Expr(Kind::kSlice, l) {}
  ExprPtr start, stop, step;
};
struct CallExpr : Expr {
  CallExpr(ExprPtr c, int l) : Expr(Kind::kCall, l), callee(std::move(c)) {}
  ExprPtr callee;
  Arguments args;
};
struct FilterExpr : Expr {  // operand | name(args); operand is null inside {% filter %}
  FilterExpr(ExprPtr o, std::string n, int l)
      : Expr(Kind::kFilter, l), operand(std::move(o)), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  Arguments args;
};
struct TestExpr : Expr {  // operand is name(args)
  TestExpr(ExprPtr o, std::string n, int l)
      : Expr(Kind::kTest, l), operand(std::move(o)), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  Arguments args;
};
struct UnaryExpr : Expr {  // "-", "+", "not"
  UnaryExpr(std::string o, ExprPtr e, int l)
      : Expr(Kind::kUnary, l), op(std::move(o)), operand(std::move(e)) {}
  std::string op;
  ExprPtr operand;
};
struct BinaryExpr : Expr {  // + - * / // % ** ~ and or
  BinaryExpr(std::string o, ExprPtr a, ExprPtr b, int l)
      : Expr(Kind::kBinary, l), op(std::move(o)), left(std::move(a)), right(std::move(b)) {}
  std::string op;
  ExprPtr left, right;
};
struct CompareExpr : Expr {  // first op1 e1 op2 e2 ...; ops: == != < <= > >= in notin
  CompareExpr(ExprPtr f, int l) : Expr(Kind::kCompare, l), first(std::move(f)) {}
  ExprPtr first;
  std::vector<std::pair<std::string, ExprPtr>> rest;
};
struct ConditionExpr : Expr {  // then if condition else otherwise
  explicit ConditionExpr(int l) : Expr(Kind::kCondition, l) {}
  ExprPtr then, condition, otherwise;  // otherwise may be null (Undefined)
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind {
    kOutput,
    kPrint,
    kIf,
    kFor,
    kSet,
    kSetBlock,
    kMacro,
    kCallBlock,
    kFilterBlock,
    kWith,
    kScope,
    kBreak,
    kContinue
  };
  Stmt(Kind k, int l) : kind(k), line(l) {}
  virtual ~Stmt() = default;
  Kind kind;
  int line;
};

struct OutputStmt : Stmt {
  OutputStmt(std::string t, int l) : Stmt(Kind::kOutput, l), text(std::move(t)) {}
  std::string text;
};
struct PrintStmt : Stmt {
  PrintStmt(ExprPtr e, int l) : Stmt(Kind::kPrint, l), expr(std::move(e)) {}
  ExprPtr expr;
};
struct IfStmt : Stmt {
  explicit IfStmt(int l) : Stmt(Kind::kIf, l) {}
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body otherwise;
};
struct ForStmt : Stmt {
  explicit ForStmt(int l) : Stmt(Kind::kFor, l) {}
  ExprPtr target;  // a name or a tuple of names
  ExprPtr iterable;
  ExprPtr filter;  // may be null
  Body body;
  Body otherwise;
  bool recursive = false;
};
struct SetStmt : Stmt {  // target: name, tuple of names, or namespace attribute
  SetStmt(ExprPtr t, ExprPtr v, int l)
      : Stmt(Kind::kSet, l), target(std::move(t)), value(std::move(v)) {}
  ExprPtr target;
  ExprPtr value;
};
struct SetBlockStmt : Stmt {  // {% set target | filters %}body{% endset %}
  explicit SetBlockStmt(int l) : Stmt(Kind::kSetBlock, l) {}
  ExprPtr target;
  std::vector<std::unique_ptr<FilterExpr>> filters;
  Body body;
};
struct Parameter {
  std::string name;
  ExprPtr default_value;  // may be null
};
struct MacroStmt : Stmt {
  explicit MacroStmt(int l) : Stmt(Kind::kMacro, l) {}
  std::string name;
  std::vector<Parameter> parameters;
  Body body;
};
struct CallBlockStmt : Stmt {  // {% call(params) macro(args) %}body{% endcall %}
  explicit CallBlockStmt(int l) : Stmt(Kind::kCallBlock, l) {}
  ExprPtr call;
  std::vector<Parameter> caller_parameters;
  Body body;
};
struct FilterBlockStmt : Stmt {
  explicit FilterBlockStmt(int l) : Stmt(Kind::kFilterBlock, l) {}
  std::vector<std::unique_ptr<FilterExpr>> filters;
  Body body;
};
struct WithStmt : Stmt {
  explicit WithStmt(int l) : Stmt(Kind::kWith, l) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> assignments;
  Body body;
};
struct ScopeStmt
    : Stmt {  // a body in its own scope: {% generation %} (transformers' AssistantTracker)
  explicit ScopeStmt(int l) : Stmt(Kind::kScope, l) {}
  Body body;
};
struct LoopControlStmt : Stmt {
  using Stmt::Stmt;
};

}  // namespace vime::tokenizer::jinja
