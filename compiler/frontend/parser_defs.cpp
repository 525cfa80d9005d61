// Definitions: functions, classes and lambdas, with their decorators,
// parameters and PEP 695 type parameters.
#include "compiler/frontend/parser_impl.hpp"

namespace kiln::frontend {

StmtPtr Parser::parse_decorated() {
  std::vector<ExprPtr> decorators;
  while (accept_op("@")) {
    decorators.push_back(parse_named());
    if (peek().kind != TokenKind::Newline)
      fail_expected("end of line after the decorator");
    advance();
  }
  if (at_keyword("def"))
    return parse_function_def(std::move(decorators), nullptr);
  if (at_keyword("class"))
    return parse_class_def(std::move(decorators));
  if (at_keyword("async") && peek(1).is_name("def")) {
    const Token &async = advance();
    return parse_function_def(std::move(decorators), &async);
  }
  fail_expected("'def', 'async def' or 'class' after the decorator");
}

void Parser::begin_definition(Stmt &def, const Token &first, const Token &keyword) const {
  def.def_line = keyword.loc.line;
  def.source_begin = first.begin - (first.loc.col - 1);
}

void Parser::end_definition(Stmt &def) const {
  // Through the end of the line of the body's last token, so that the
  // definition's text ends with a newline and a trailing comment stays in.
  const std::string &text = source_->text();
  size_t end = text.find_first_of("\r\n", last_end_);
  if (end == std::string::npos)
    end = text.size();
  else
    end += text.compare(end, 2, "\r\n") == 0 ? 2 : 1;
  def.source_end = static_cast<uint32_t>(end);
}

StmtPtr Parser::parse_function_def(std::vector<ExprPtr> decorators, const Token *async) {
  const Token &def = advance();
  const Token &first = async ? *async : def;
  auto fn = make_stmt(async ? StmtKind::AsyncFunctionDef : StmtKind::FunctionDef, first.loc);
  fn->decorators = std::move(decorators);
  begin_definition(*fn, first, def);
  fn->id = expect_name("a function name after 'def'").text;
  if (at_op("["))
    parse_type_params(fn->type_params);
  expect_op("(", "after the function name");
  parse_params(fn->params, ")", true, "function '" + fn->id + "'");
  expect_op(")", "to close the parameter list");
  if (accept_op("->"))
    fn->annotation = parse_test();
  expect_op(":", "after the function signature");
  fn->body = parse_block("the function definition", def);
  end_definition(*fn);
  return fn;
}

StmtPtr Parser::parse_class_def(std::vector<ExprPtr> decorators) {
  const Token &keyword = advance();
  auto cls = make_stmt(StmtKind::ClassDef, keyword.loc);
  cls->decorators = std::move(decorators);
  begin_definition(*cls, keyword, keyword);
  cls->id = expect_name("a class name after 'class'").text;
  if (at_op("["))
    parse_type_params(cls->type_params);
  if (at_op("(")) {
    // The bases and keywords are a call's arguments.
    const Token &open = advance();
    Expr arguments(ExprKind::Call, open.loc);
    parse_arguments(arguments, open);
    cls->targets = std::move(arguments.children);
    cls->keywords = std::move(arguments.keywords);
  }
  expect_op(":", "after the class header");
  cls->body = parse_block("the class definition", keyword);
  end_definition(*cls);
  return cls;
}

void Parser::parse_params(std::vector<Param> &params, std::string_view close, bool annotations,
                          const std::string &owner) {
  bool slash = false;               // `/` seen
  bool star = false;                // `*` or `*args` seen: what follows is keyword-only
  const Token *bare_star = nullptr; // a `*` still waiting for a keyword-only parameter
  bool var_keyword = false;         // `**kwargs` seen: nothing may follow
  bool defaults = false;            // a positional parameter with a default seen
  while (!at_op(close)) {
    const Token &token = peek();
    if (var_keyword)
      fail(token.loc, "no parameter can follow '**" + params.back().name + "'");
    if (token.is_op("/")) {
      if (slash)
        fail(token.loc, "'/' may appear only once in a parameter list");
      if (star)
        fail(token.loc, "'/' must come before '*'");
      if (params.empty())
        fail(token.loc, "at least one parameter must come before '/'");
      advance();
      slash = true;
      for (Param &p : params)
        p.kind = ParamKind::PositionalOnly;
    } else if (token.is_op("*") && (peek(1).is_op(",") || peek(1).is_op(close))) {
      if (star)
        fail(token.loc, "'*' may appear only once in a parameter list");
      advance();
      star = true;
      bare_star = &token;
    } else {
      Param param;
      param.loc = token.loc;
      if (token.is_op("*") || token.is_op("**")) {
        if (token.is_op("*") && star)
          fail(token.loc, "'*' may appear only once in a parameter list");
        param.kind = token.is_op("*") ? ParamKind::VarPositional : ParamKind::VarKeyword;
        advance();
        param.loc = peek().loc;
      } else if (star) {
        param.kind = ParamKind::KeywordOnly;
        bare_star = nullptr;
      }
      param.name = expect_name("a parameter name").text;
      for (const Param &other : params)
        if (other.name == param.name)
          fail(param.loc, "duplicate parameter '" + param.name + "' in " + owner);
      if (annotations && accept_op(":")) {
        // `*args: *Ts` (PEP 646) annotates with a starred expression.
        if (param.kind == ParamKind::VarPositional && at_op("*")) {
          const Token &star_token = advance();
          param.annotation = make_expr(ExprKind::Starred, star_token.loc);
          param.annotation->children.push_back(parse_binary(0));
        } else {
          param.annotation = parse_test();
        }
      }
      const bool variadic =
          param.kind == ParamKind::VarPositional || param.kind == ParamKind::VarKeyword;
      if (at_op("=")) {
        if (variadic)
          fail(peek().loc, "a variadic parameter ('" + param.name + "') cannot have a default");
        advance();
        param.default_value = parse_test();
        defaults |= param.kind != ParamKind::KeywordOnly;
      } else if (defaults && !star && !variadic) {
        fail(param.loc,
             "parameter '" + param.name + "' without a default follows a parameter with a default");
      }
      star |= param.kind == ParamKind::VarPositional;
      var_keyword = param.kind == ParamKind::VarKeyword;
      params.push_back(std::move(param));
    }
    if (!accept_op(",")) {
      if (!at_op(close))
        fail_expected("',' or '" + std::string(close) + "' in the parameter list");
      break;
    }
  }
  if (bare_star)
    fail(bare_star->loc, "a bare '*' must be followed by a keyword-only parameter");
}

void Parser::parse_type_params(std::vector<ExprPtr> &out) {
  advance(); // '['
  do {
    if (at_op("]") && !out.empty())
      break; // a trailing comma
    const Token &token = peek();
    ExprKind kind = ExprKind::TypeVar;
    if (accept_op("*"))
      kind = ExprKind::TypeVarTuple;
    else if (accept_op("**"))
      kind = ExprKind::ParamSpec;
    auto param = make_expr(kind, token.loc);
    param->id = expect_name("a type parameter name").text;
    if (kind == ExprKind::TypeVar && accept_op(":"))
      param->children.push_back(parse_test()); // the bound, or a tuple of constraints
    out.push_back(std::move(param));
  } while (accept_op(","));
  expect_op("]", "to close the type parameters");
}

ExprPtr Parser::parse_lambda() {
  const Token &keyword = advance();
  NestingGuard guard(*this, keyword.loc);
  auto e = make_expr(ExprKind::Lambda, keyword.loc);
  parse_params(e->params, ":", false, "lambda");
  expect_op(":", "after the lambda's parameters");
  e->children.push_back(parse_test());
  return e;
}

} // namespace kiln::frontend
