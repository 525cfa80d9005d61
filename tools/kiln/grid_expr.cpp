#include "tools/kiln/grid_expr.hpp"

#include <cctype>
#include <limits>

#include "kiln/error.hpp"
#include "tools/kiln/cli_common.hpp"

namespace kiln::cli {

namespace {

/// A recursive-descent reader of one axis:
///   product := term ('*' term)*
///   term    := INTEGER | NAME | ['triton.'] 'cdiv' '(' product ',' product ')' | '(' product ')'
/// `lookup` gives a name's value (or checks it only, when parsing).
class Reader {
public:
  Reader(std::string_view s, const std::string &whole,
         const std::function<int64_t(const std::string &)> &lookup)
      : s_(s), whole_(whole), lookup_(lookup) {}

  int64_t axis() {
    const int64_t v = product();
    skip();
    if (at_ < s_.size())
      fail("unexpected '" + std::string(1, s_[at_]) + "'");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string &why) const {
    throw UsageError("--grid '" + whole_ + "': " + why +
                     "; an axis is a product of integers, parameter names and cdiv(a, b), like "
                     "cdiv(M,BM),cdiv(N,BN)");
  }
  void skip() {
    while (at_ < s_.size() && s_[at_] == ' ')
      ++at_;
  }
  bool eat(char c) {
    skip();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  int64_t product() {
    int64_t v = term();
    while (eat('*')) {
      const int64_t t = term();
      if (t != 0 && v > std::numeric_limits<int64_t>::max() / t)
        fail("the product overflows");
      v *= t;
    }
    return v;
  }
  int64_t term() {
    skip();
    if (eat('(')) {
      const int64_t v = product();
      if (!eat(')'))
        fail("a '(' is not closed");
      return v;
    }
    const std::size_t start = at_;
    if (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
      int64_t v = 0;
      while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
          fail("a number is too large");
        v = v * 10 + (s_[at_++] - '0');
      }
      return v;
    }
    while (at_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_' || s_[at_] == '.'))
      ++at_;
    std::string name(s_.substr(start, at_ - start));
    if (name.empty())
      fail(at_ < s_.size() ? "unexpected '" + std::string(1, s_[at_]) + "'" : "an axis is empty");
    if (name == "cdiv" || name == "triton.cdiv") {
      if (!eat('('))
        fail("cdiv needs (a, b)");
      const int64_t a = product();
      if (!eat(','))
        fail("cdiv needs two arguments");
      const int64_t b = product();
      if (!eat(')'))
        fail("cdiv's ')' is missing");
      if (b <= 0)
        fail("cdiv by " + std::to_string(b));
      return a <= 0 ? 0 : (a + b - 1) / b;
    }
    if (name.find('.') != std::string::npos)
      fail("'" + name + "' is not a parameter name");
    return lookup_(name);
  }

  std::string_view s_;
  const std::string &whole_;
  const std::function<int64_t(const std::string &)> &lookup_;
  std::size_t at_ = 0;
};

/// The axes of `text`: split at commas outside parentheses.
std::vector<std::string> split_axes(std::string_view text) {
  std::vector<std::string> axes;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      axes.emplace_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return axes;
}

} // namespace

bool is_grid_expr(std::string_view text) {
  for (char c : text)
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '(' || c == '*' || c == '_')
      return true;
  return false;
}

GridExpr GridExpr::parse(std::string_view text) {
  GridExpr g;
  g.text_ = std::string(text);
  g.axes_ = split_axes(text);
  if (g.axes_.size() > 3)
    throw UsageError("--grid '" + g.text_ + "' has more than 3 axes");
  const std::function<int64_t(const std::string &)> any = [&](const std::string &name) {
    g.names_.push_back(name);
    return int64_t{1};
  };
  for (const std::string &a : g.axes_)
    Reader(a, g.text_, any).axis();
  return g;
}

Grid GridExpr::eval(const BoundArgs &args) const {
  const std::function<int64_t(const std::string &)> lookup = [&](const std::string &name) {
    const Arg &a = args[name];
    if (a.kind() != Arg::Kind::Int && a.kind() != Arg::Kind::UInt && a.kind() != Arg::Kind::Bool)
      throw ArgumentError("--grid '" + text_ + "' uses '" + name +
                          "', which is not an integer argument");
    return a.kind() == Arg::Kind::UInt ? static_cast<int64_t>(a.as_uint()) : a.as_int();
  };
  int64_t dims[3] = {1, 1, 1};
  for (std::size_t i = 0; i < axes_.size(); ++i)
    dims[i] = Reader(axes_[i], text_, lookup).axis();
  for (int64_t d : dims)
    if (d < 0 || d > std::numeric_limits<uint32_t>::max())
      throw UsageError("--grid '" + text_ + "' gives " + std::to_string(d) +
                       " programs on an axis");
  const Grid g(static_cast<uint32_t>(dims[0]), static_cast<uint32_t>(dims[1]),
               static_cast<uint32_t>(dims[2]));
  if (!g.within_limits())
    throw UsageError("--grid '" + text_ + "': " + grid_limits_message(g));
  return g;
}

} // namespace kiln::cli
