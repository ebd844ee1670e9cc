#include "vime/tokenizer/jinja/parser.hpp"

#include <initializer_list>

#include "vime/tokenizer/jinja/builtins.hpp"
#include "vime/tokenizer/jinja/error.hpp"

namespace vime::tokenizer::jinja {
namespace {

using Type = Token::Type;
constexpr int kMaxNesting = 200;  // deeper expressions or blocks are refused, not a stack overflow

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  Body parse_template() {
    Body body = subparse({});
    if (current().type != Type::kEnd) fail("unexpected '" + describe(current()) + "'");
    return body;
  }

 private:
  // --- token stream
  const Token& current() const { return tokens_[pos_]; }
  const Token& look() const { return tokens_[pos_ + 1 < tokens_.size() ? pos_ + 1 : pos_]; }
  const Token& advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool is_op(std::string_view op) const {
    return current().type == Type::kOperator && current().text == op;
  }
  bool is_name(std::string_view name) const {
    return current().type == Type::kName && current().text == name;
  }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case Type::kData:
        return "template data";
      case Type::kVariableBegin:
        return "begin of print statement";
      case Type::kVariableEnd:
        return "end of print statement";
      case Type::kBlockBegin:
        return "begin of statement block";
      case Type::kBlockEnd:
        return "end of statement block";
      case Type::kEnd:
        return "end of template";
      case Type::kString:
        return "string";
      case Type::kInteger:
        return "integer";
      case Type::kFloat:
        return "float";
      default:
        return t.text;
    }
  }

  [[noreturn]] void fail(const std::string& message, int line = 0) const {
    throw TemplateError("TemplateSyntaxError", message, line > 0 ? line : current().line);
  }

  void expect_op(std::string_view op) {
    if (!skip_op(op))
      fail("expected token '" + std::string(op) + "', got '" + describe(current()) + "'");
  }
  const Token& expect_name() {
    if (current().type != Type::kName)
      fail("expected token 'name', got '" + describe(current()) + "'");
    return advance();
  }
  void expect_name(std::string_view name) {
    if (!skip_name(name))
      fail("expected token '" + std::string(name) + "', got '" + describe(current()) + "'");
  }
  void expect_block_end() {
    if (current().type == Type::kEnd)
      fail("unexpected end of template, expected 'end of statement block'.");
    if (current().type != Type::kBlockEnd)
      fail("expected token 'end of statement block', got '" + describe(current()) + "'");
    advance();
  }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxNesting)
        parser.fail("template nesting too deep (more than " + std::to_string(kMaxNesting) +
                    " levels)");
    }
    ~DepthGuard() { --parser.depth_; }
    Parser& parser;
  };

  // --- statements
  Body subparse(std::initializer_list<std::string_view> end_tags) {
    DepthGuard guard(*this);
    if (end_tags.size() > 0) end_token_stack_.emplace_back(end_tags.begin(), end_tags.end());
    struct Pop {
      Parser& p;
      bool active;
      ~Pop() {
        if (active) p.end_token_stack_.pop_back();
      }
    } pop{*this, end_tags.size() > 0};
    Body body;
    while (current().type != Type::kEnd) {
      const Token& t = current();
      if (t.type == Type::kData) {
        body.push_back(std::make_unique<OutputStmt>(t.text, t.line));
        advance();
      } else if (t.type == Type::kVariableBegin) {
        advance();
        ExprPtr e = parse_tuple(true, false);
        if (current().type == Type::kEnd)
          fail("unexpected end of template, expected 'end of print statement'.");
        if (current().type != Type::kVariableEnd)
          fail("expected token 'end of print statement', got '" + describe(current()) + "'");
        advance();
        body.push_back(std::make_unique<PrintStmt>(std::move(e), t.line));
      } else if (t.type == Type::kBlockBegin) {
        advance();
        for (std::string_view tag : end_tags) {
          if (is_name(tag)) return body;
        }
        body.push_back(parse_statement());
      } else {
        fail("unexpected '" + describe(t) + "'");
      }
    }
    if (end_tags.size() > 0) fail_unknown_tag_or_eof(nullptr);
    return body;
  }

  // Jinja2's _fail_ut_eof: what was found, which end tags were expected, which block is open.
  [[noreturn]] void fail_unknown_tag_or_eof(const std::string* tag) const {
    std::string message =
        tag ? "Encountered unknown tag '" + *tag + "'." : "Unexpected end of template.";
    if (!end_token_stack_.empty()) {
      std::string looking;
      for (const std::string& t : end_token_stack_.back())
        looking += (looking.empty() ? "'" : " or '") + t + "'";
      bool expected_somewhere = false;
      for (const auto& level : end_token_stack_) {
        for (const std::string& t : level)
          expected_somewhere = expected_somewhere || (tag && t == *tag);
      }
      if (expected_somewhere) {
        message +=
            " You probably made a nesting mistake. Jinja is expecting this tag, but currently "
            "looking for " +
            looking + ".";
      } else {
        message += " Jinja was looking for the following tags: " + looking + ".";
      }
    }
    if (!tag_stack_.empty())
      message += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
    fail(message);
  }

  // Parses statements until one of `end_tags`; leaves the stream on that tag's name.
  Body parse_statements(std::initializer_list<std::string_view> end_tags,
                        bool drop_needle = false) {
    skip_op(":");
    expect_block_end();
    Body body = subparse(end_tags);
    if (current().type == Type::kEnd) fail("unexpected end of template");
    if (drop_needle) advance();
    return body;
  }

  StmtPtr parse_statement() {
    if (current().type != Type::kName) fail("tag name expected");
    std::string tag = current().text;
    int line = current().line;
    tag_stack_.push_back(tag);
    StmtPtr stmt;
    if (tag == "for")
      stmt = parse_for();
    else if (tag == "if")
      stmt = parse_if();
    else if (tag == "set")
      stmt = parse_set();
    else if (tag == "macro")
      stmt = parse_macro();
    else if (tag == "call")
      stmt = parse_call_block();
    else if (tag == "filter")
      stmt = parse_filter_block();
    else if (tag == "with")
      stmt = parse_with();
    else if (tag == "print") {
      advance();
      stmt = std::make_unique<PrintStmt>(parse_tuple(true, false), line);
    } else if (tag == "break" || tag == "continue") {
      advance();
      stmt = std::make_unique<LoopControlStmt>(
          tag == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, line);
    } else if (tag == "generation") {
      advance();
      auto scope = std::make_unique<ScopeStmt>(line);
      scope->body = parse_statements({"endgeneration"}, true);
      stmt = std::move(scope);
    } else {
      tag_stack_.pop_back();
      fail_unknown_tag_or_eof(&tag);
    }
    tag_stack_.pop_back();
    expect_block_end();
    return stmt;
  }

  StmtPtr parse_for() {
    auto node = std::make_unique<ForStmt>(advance().line);
    node->target = parse_assign_target({"in"});
    expect_name("in");
    node->iterable = parse_tuple(false, false, {"recursive"});
    if (skip_name("if")) node->filter = parse_expression(true);
    node->recursive = skip_name("recursive");
    node->body = parse_statements({"endfor", "else"});
    if (advance().text == "else") node->otherwise = parse_statements({"endfor"}, true);
    return node;
  }

  StmtPtr parse_if() {
    auto node = std::make_unique<IfStmt>(advance().line);
    while (true) {
      ExprPtr condition = parse_tuple(false, false);
      Body body = parse_statements({"elif", "else", "endif"});
      node->branches.emplace_back(std::move(condition), std::move(body));
      std::string tag = advance().text;
      if (tag == "elif") continue;
      if (tag == "else") node->otherwise = parse_statements({"endif"}, true);
      break;
    }
    return node;
  }

  StmtPtr parse_set() {
    int line = advance().line;
    ExprPtr target;
    if (current().type == Type::kName && look().type == Type::kOperator && look().text == ".") {
      const Token& name = advance();
      advance();
      const Token& attr = expect_name();
      target = std::make_unique<AttrExpr>(std::make_unique<NameExpr>(name.text, name.line),
                                          attr.text, name.line);
    } else {
      target = parse_assign_target({});
    }
    if (skip_op("="))
      return std::make_unique<SetStmt>(std::move(target), parse_tuple(true, false), line);
    auto node = std::make_unique<SetBlockStmt>(line);
    node->target = std::move(target);
    while (is_op("|")) {
      advance();
      node->filters.push_back(parse_filter_call(nullptr));
    }
    node->body = parse_statements({"endset"}, true);
    return node;
  }

  std::vector<Parameter> parse_signature() {
    std::vector<Parameter> params;
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) expect_op(",");
      Parameter p;
      p.name = expect_name().text;
      if (skip_op("=")) p.default_value = parse_expression(true);
      params.push_back(std::move(p));
    }
    expect_op(")");
    return params;
  }

  StmtPtr parse_macro() {
    auto node = std::make_unique<MacroStmt>(advance().line);
    node->name = expect_name().text;
    node->parameters = parse_signature();
    node->body = parse_statements({"endmacro"}, true);
    return node;
  }

  StmtPtr parse_call_block() {
    auto node = std::make_unique<CallBlockStmt>(advance().line);
    if (is_op("(")) node->caller_parameters = parse_signature();
    node->call = parse_expression(true);
    if (node->call->kind != Expr::Kind::kCall) fail("expected call", node->line);
    node->body = parse_statements({"endcall"}, true);
    return node;
  }

  StmtPtr parse_filter_block() {
    auto node = std::make_unique<FilterBlockStmt>(advance().line);
    node->filters.push_back(parse_filter_call(nullptr));
    while (skip_op("|")) node->filters.push_back(parse_filter_call(nullptr));
    node->body = parse_statements({"endfilter"}, true);
    return node;
  }

  StmtPtr parse_with() {
    auto node = std::make_unique<WithStmt>(advance().line);
    while (current().type != Type::kBlockEnd) {
      if (!node->assignments.empty()) expect_op(",");
      ExprPtr target = parse_assign_target({});
      expect_op("=");
      node->assignments.emplace_back(std::move(target), parse_expression(true));
    }
    node->body = parse_statements({"endwith"}, true);
    return node;
  }

  ExprPtr parse_assign_target(std::initializer_list<std::string_view> extra_end) {
    int line = current().line;
    ExprPtr target = parse_tuple(false, true, extra_end);
    auto check = [&](const Expr& e) {
      if (e.kind == Expr::Kind::kLiteral) fail("can't assign to 'const'", line);
      if (e.kind != Expr::Kind::kName) fail("can't assign to this expression", line);
      const std::string& name = static_cast<const NameExpr&>(e).name;
      if (name == "true" || name == "false" || name == "none" || name == "True" ||
          name == "False" || name == "None") {
        fail("can't assign to 'const'", line);
      }
    };
    if (target->kind == Expr::Kind::kTuple) {
      for (const auto& item : static_cast<SequenceExpr&>(*target).items) check(*item);
    } else {
      check(*target);
    }
    return target;
  }

  // --- expressions
  bool is_tuple_end(std::initializer_list<std::string_view> extra_end) const {
    Type t = current().type;
    if (t == Type::kVariableEnd || t == Type::kBlockEnd || is_op(")")) return true;
    for (std::string_view name : extra_end) {
      if (is_name(name)) return true;
    }
    return false;
  }

  // A comma-separated list becomes a tuple; `simplified` parses primaries only (assignment
  // targets).
  ExprPtr parse_tuple(bool with_condexpr, bool simplified,
                      std::initializer_list<std::string_view> extra_end = {},
                      bool explicit_parentheses = false) {
    int line = current().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (is_tuple_end(extra_end)) break;
      items.push_back(simplified ? parse_primary() : parse_expression(with_condexpr));
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
      line = current().line;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parentheses) fail("Expected an expression, got '" + describe(current()) + "'");
    }
    auto tuple = std::make_unique<SequenceExpr>(Expr::Kind::kTuple, line);
    tuple->items = std::move(items);
    return tuple;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    DepthGuard guard(*this);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    int line = current().line;
    ExprPtr expr = parse_or();
    while (skip_name("if")) {
      auto cond = std::make_unique<ConditionExpr>(line);
      cond->condition = parse_or();
      if (skip_name("else")) cond->otherwise = parse_condexpr();
      cond->then = std::move(expr);
      expr = std::move(cond);
      line = current().line;
    }
    return expr;
  }

  ExprPtr parse_or() {
    int line = current().line;
    ExprPtr left = parse_and();
    while (skip_name("or")) {
      left = std::make_unique<BinaryExpr>("or", std::move(left), parse_and(), line);
      line = current().line;
    }
    return left;
  }

  ExprPtr parse_and() {
    int line = current().line;
    ExprPtr left = parse_not();
    while (skip_name("and")) {
      left = std::make_unique<BinaryExpr>("and", std::move(left), parse_not(), line);
      line = current().line;
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      int line = advance().line;
      DepthGuard guard(*this);
      return std::make_unique<UnaryExpr>("not", parse_not(), line);
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    int line = current().line;
    ExprPtr first = parse_math1();
    std::unique_ptr<CompareExpr> cmp;
    while (true) {
      std::string op;
      if (current().type == Type::kOperator &&
          (current().text == "==" || current().text == "!=" || current().text == "<" ||
           current().text == "<=" || current().text == ">" || current().text == ">=")) {
        op = advance().text;
      } else if (skip_name("in")) {
        op = "in";
      } else if (is_name("not") && look().type == Type::kName && look().text == "in") {
        advance();
        advance();
        op = "notin";
      } else {
        break;
      }
      if (!cmp) cmp = std::make_unique<CompareExpr>(std::move(first), line);
      cmp->rest.emplace_back(op, parse_math1());
    }
    if (cmp) return cmp;
    return first;
  }

  ExprPtr parse_math1() {
    int line = current().line;
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      std::string op = advance().text;
      left = std::make_unique<BinaryExpr>(op, std::move(left), parse_concat(), line);
      line = current().line;
    }
    return left;
  }

  ExprPtr parse_concat() {
    int line = current().line;
    ExprPtr left = parse_math2();
    while (skip_op("~"))
      left = std::make_unique<BinaryExpr>("~", std::move(left), parse_math2(), line);
    return left;
  }

  ExprPtr parse_math2() {
    int line = current().line;
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = advance().text;
      left = std::make_unique<BinaryExpr>(op, std::move(left), parse_pow(), line);
      line = current().line;
    }
    return left;
  }

  ExprPtr parse_pow() {
    int line = current().line;
    ExprPtr left = parse_unary(true);
    while (skip_op("**")) {
      left = std::make_unique<BinaryExpr>("**", std::move(left), parse_unary(true), line);
      line = current().line;
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    int line = current().line;
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      std::string op = advance().text;
      node = std::make_unique<UnaryExpr>(op, parse_unary(false), line);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = current();
    switch (t.type) {
      case Type::kName: {
        advance();
        if (t.text == "true" || t.text == "True")
          return std::make_unique<LiteralExpr>(Value(true), t.line);
        if (t.text == "false" || t.text == "False")
          return std::make_unique<LiteralExpr>(Value(false), t.line);
        if (t.text == "none" || t.text == "None")
          return std::make_unique<LiteralExpr>(Value::none(), t.line);
        return std::make_unique<NameExpr>(t.text, t.line);
      }
      case Type::kString: {
        std::string text;
        while (current().type == Type::kString) text += advance().text;
        return std::make_unique<LiteralExpr>(Value(std::move(text)), t.line);
      }
      case Type::kInteger:
        advance();
        return std::make_unique<LiteralExpr>(Value(t.integer), t.line);
      case Type::kFloat:
        advance();
        return std::make_unique<LiteralExpr>(Value(t.floating), t.line);
      case Type::kOperator:
        if (t.text == "(") {
          advance();
          ExprPtr e = parse_tuple(true, false, {}, true);
          expect_op(")");
          return e;
        }
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        [[fallthrough]];
      default:
        fail("unexpected '" + describe(t) + "'");
    }
  }

  ExprPtr parse_list() {
    auto node = std::make_unique<SequenceExpr>(Expr::Kind::kList, advance().line);
    while (!is_op("]")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("]")) break;
      node->items.push_back(parse_expression(true));
    }
    expect_op("]");
    return node;
  }

  ExprPtr parse_dict() {
    auto node = std::make_unique<DictExpr>(advance().line);
    while (!is_op("}")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("}")) break;
      ExprPtr key = parse_expression(true);
      expect_op(":");
      node->items.emplace_back(std::move(key), parse_expression(true));
    }
    expect_op("}");
    return node;
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        advance();
        node = parse_filter_call(std::move(node));
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    const Token& t = advance();
    if (t.text == ".") {
      const Token& attr = current();
      advance();
      if (attr.type == Type::kName)
        return std::make_unique<AttrExpr>(std::move(node), attr.text, t.line);
      if (attr.type != Type::kInteger) fail("expected name or number", attr.line);
      return std::make_unique<ItemExpr>(
          std::move(node), std::make_unique<LiteralExpr>(Value(attr.integer), attr.line), t.line);
    }
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
      if (!args.empty()) expect_op(",");
      args.push_back(parse_subscribed());
    }
    expect_op("]");
    ExprPtr index;
    if (args.size() == 1) {
      index = std::move(args[0]);
    } else {
      auto tuple = std::make_unique<SequenceExpr>(Expr::Kind::kTuple, t.line);
      tuple->items = std::move(args);
      index = std::move(tuple);
    }
    return std::make_unique<ItemExpr>(std::move(node), std::move(index), t.line);
  }

  ExprPtr parse_subscribed() {
    int line = current().line;
    auto slice = std::make_unique<SliceExpr>(line);
    if (is_op(":")) {
      advance();
    } else {
      ExprPtr e = parse_expression(true);
      if (!is_op(":")) return e;
      advance();
      slice->start = std::move(e);
    }
    if (!is_op(":") && !is_op("]") && !is_op(",")) slice->stop = parse_expression(true);
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(",")) slice->step = parse_expression(true);
    }
    return slice;
  }

  Arguments parse_call_args() {
    int line = current().line;
    expect_op("(");
    Arguments args;
    bool require_comma = false;
    while (!is_op(")")) {
      if (require_comma) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (is_op("*") || is_op("**")) fail("*args and **kwargs are not supported in calls", line);
      if (current().type == Type::kName && look().type == Type::kOperator && look().text == "=") {
        std::string key = advance().text;
        advance();
        args.keyword.emplace_back(key, parse_expression(true));
      } else {
        if (!args.keyword.empty()) fail("invalid syntax for function call expression", line);
        args.positional.push_back(parse_expression(true));
      }
      require_comma = true;
    }
    expect_op(")");
    return args;
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto node = std::make_unique<CallExpr>(std::move(callee), current().line);
    node->args = parse_call_args();
    return node;
  }

  std::unique_ptr<FilterExpr> parse_filter_call(ExprPtr operand) {
    const Token& name = expect_name();
    std::string full = name.text;
    while (skip_op(".")) full += "." + expect_name().text;
    if (find_filter(full) == nullptr)
      throw TemplateError("TemplateAssertionError", "No filter named '" + full + "'.", name.line);
    auto node = std::make_unique<FilterExpr>(std::move(operand), full, name.line);
    if (is_op("(")) node->args = parse_call_args();
    return node;
  }

  ExprPtr parse_test(ExprPtr operand) {
    int line = advance().line;  // "is"
    bool negated = skip_name("not");
    const Token& name = expect_name();
    std::string full = name.text;
    while (skip_op(".")) full += "." + expect_name().text;
    if (find_test(full) == nullptr)
      throw TemplateError("TemplateAssertionError", "No test named '" + full + "'.", name.line);
    auto node = std::make_unique<TestExpr>(std::move(operand), full, line);
    const Token& t = current();
    bool starts_argument = t.type == Type::kName || t.type == Type::kString ||
                           t.type == Type::kInteger || t.type == Type::kFloat ||
                           (t.type == Type::kOperator && (t.text == "[" || t.text == "{"));
    if (is_op("(")) {
      node->args = parse_call_args();
    } else if (starts_argument && !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("You cannot chain multiple tests with is");
      node->args.positional.push_back(parse_postfix(parse_primary()));
    }
    if (negated) return std::make_unique<UnaryExpr>("not", std::move(node), line);
    return node;
  }

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::string> tag_stack_;                     // the statements being parsed
  std::vector<std::vector<std::string>> end_token_stack_;  // the end tags each open body waits for
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_template(); }

}  // namespace vime::tokenizer::jinja
