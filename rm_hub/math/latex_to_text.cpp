#include "math/latex_to_text.hpp"

#include <string_view>
#include <unordered_map>

#include "common/py_text.hpp"

namespace vime::rm {
namespace {

const std::unordered_map<std::string_view, std::string_view>& symbol_macros() {
  static const std::unordered_map<std::string_view, std::string_view> table = {
      {"pi", "π"},       {"infty", "∞"},     {"cdot", "·"},       {"times", "×"},
      {"cup", "∪"},      {"cap", "∩"},       {"le", "≤"},         {"leq", "≤"},
      {"ge", "≥"},       {"geq", "≥"},       {"neq", "≠"},        {"ne", ""},
      {"pm", "±"},       {"mp", "∓"},        {"div", "÷"},        {"circ", "∘"},
      {"angle", "∠"},    {"in", "∈"},        {"to", "→"},         {"ldots", "…"},
      {"dots", "…"},     {"cdots", "⋯"},     {"approx", "≈"},     {"emptyset", "∅"},
      {"lbrace", "{"},   {"rbrace", "}"},    {"langle", "⟨"},     {"rangle", "⟩"},
      {"prime", "'"},    {"quad", "  "},     {"qquad", "    "},   {"left", ""},
      {"right", ""},     {"displaystyle", ""}, {"degree", ""},    {"lfloor", "⌊"},
      {"rfloor", "⌋"},   {"lceil", "⌈"},     {"rceil", "⌉"},      {"alpha", "α"},
      {"beta", "β"},     {"gamma", "γ"},     {"delta", "δ"},      {"epsilon", "ϵ"},
      {"varepsilon", "ε"}, {"zeta", "ζ"},    {"eta", "η"},        {"theta", "θ"},
      {"iota", "ι"},     {"kappa", "κ"},     {"lambda", "λ"},     {"mu", "μ"},
      {"nu", "ν"},       {"xi", "ξ"},        {"rho", "ρ"},        {"sigma", "σ"},
      {"tau", "τ"},      {"phi", "ϕ"},       {"varphi", "φ"},     {"chi", "χ"},
      {"psi", "ψ"},      {"omega", "ω"},     {"Delta", "Δ"},      {"Omega", "Ω"},
      {"Sigma", "Σ"},    {"Pi", "Π"},        {"Gamma", "Γ"},      {"Theta", "Θ"},
      {"log", "log"},    {"ln", "ln"},       {"exp", "exp"},      {"sin", "sin"},
      {"cos", "cos"},    {"tan", "tan"},     {"cot", "cot"},      {"sec", "sec"},
      {"csc", "csc"},    {"arcsin", "arcsin"}, {"arccos", "arccos"}, {"arctan", "arctan"},
      {"max", "max"},    {"min", "min"},     {"gcd", "gcd"},      {"lim", "lim"},
      {"det", "det"},    {"mid", "|"},       {"vert", "|"},       {"sim", "∼"},
      {"equiv", "≡"},    {"perp", "⊥"},      {"parallel", "∥"},   {"subset", "⊂"},
      {"subseteq", "⊆"}, {"setminus", "∖"},  {"forall", "∀"},     {"exists", "∃"},
      {"rightarrow", "→"}, {"Rightarrow", "⇒"}, {"star", "⋆"},    {"ast", "∗"},
      {"bullet", "∙"},   {"triangle", "△"},  {"sqcup", "⊔"},      {"hbar", "ℏ"},
      {"ell", "ℓ"},      {"partial", "∂"},   {"nabla", "∇"},      {"sum", "∑"},
      {"prod", "∏"},     {"int", "∫"},       {"oint", "∮"},       {"neg", "¬"},
      {"land", "∧"},     {"lor", "∨"},       {"wedge", "∧"},      {"vee", "∨"},
  };
  return table;
}

class Renderer {
 public:
  explicit Renderer(std::string_view s) : s_(s) {}

  std::string render_all() {
    std::string out;
    while (i_ < s_.size()) render_one(out, /*top_level=*/true);
    return out;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }

  static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

  void skip_spaces() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  // Renders `{...}` starting after the '{' up to its '}' (or the end).
  std::string render_group_body() {
    std::string out;
    if (depth_ >= kMaxDepth) {  // pathological nesting: keep the rest as plain text
      out.assign(s_.substr(i_));
      i_ = s_.size();
      return out;
    }
    ++depth_;
    while (!at_end() && s_[i_] != '}') render_one(out, false);
    if (!at_end()) ++i_;  // '}'
    --depth_;
    return out;
  }

  // A macro argument: {group}, a macro, or one character.
  std::string render_argument() {
    skip_spaces();
    if (at_end()) return "";
    std::string out;
    if (s_[i_] == '{') {
      ++i_;
      return render_group_body();
    }
    if (s_[i_] == '\\') {
      render_one(out, false);
      return out;
    }
    size_t n = utf8_char_size(s_, i_);
    out.assign(s_.substr(i_, n));
    i_ += n;
    return out;
  }

  void skip_optional_argument() {
    size_t save = i_;
    skip_spaces();
    if (!at_end() && s_[i_] == '[') {
      size_t close = s_.find(']', i_);
      if (close != std::string_view::npos) {
        i_ = close + 1;
        return;
      }
    }
    i_ = save;
  }

  void render_macro(std::string& out) {
    ++i_;  // '\'
    if (at_end()) return;
    if (!is_letter(s_[i_])) {
      char c = s_[i_];
      i_ += utf8_char_size(s_, i_);
      switch (c) {
        case '\\': out += "\n"; break;
        case ',': case ';': case ':': case ' ': case '>': out += " "; break;
        case '!': break;
        case '%': case '$': case '{': case '}': case '&': case '#': case '_': out.push_back(c); break;
        case '|': out += "‖"; break;
        default: break;
      }
      return;
    }
    size_t start = i_;
    while (!at_end() && is_letter(s_[i_])) ++i_;
    std::string_view name = s_.substr(start, i_ - start);
    skip_spaces();
    if (name == "frac") {
      std::string num = render_argument();
      std::string den = render_argument();
      out += num + "/" + den;
      return;
    }
    if (name == "sqrt") {
      skip_optional_argument();
      out += "√(" + render_argument() + ")";
      return;
    }
    if (name == "mbox") {
      render_argument();
      return;
    }
    auto& table = symbol_macros();
    if (auto it = table.find(name); it != table.end()) out += it->second;
    // Any other macro (\text, \mathrm, \boxed, unknown ones) renders as nothing; the group that
    // follows renders as its text.
  }

  void render_one(std::string& out, bool top_level) {
    char c = s_[i_];
    switch (c) {
      case '\\':
        if (depth_ >= kMaxDepth) {  // \frac\frac\frac...: keep the rest as plain text
          out.append(s_.substr(i_));
          i_ = s_.size();
          return;
        }
        ++depth_;
        render_macro(out);
        --depth_;
        return;
      case '{': ++i_; out += render_group_body(); return;
      case '}': ++i_; if (!top_level) out.push_back('}'); return;
      case '$': ++i_; return;
      case '~': ++i_; out += "\xc2\xa0"; return;
      default: {
        size_t n = utf8_char_size(s_, i_);
        out.append(s_.substr(i_, n));
        i_ += n;
      }
    }
  }

  static constexpr int kMaxDepth = 256;
  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string latex_to_text(std::string_view latex) { return Renderer(latex).render_all(); }

}  // namespace vime::rm
