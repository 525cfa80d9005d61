#include "compiler/frontend/import_demand.hpp"

#include "compiler/frontend/module_info.hpp"
#include "compiler/frontend/module_set.hpp"
#include "compiler/frontend/parser.hpp"
#include "kiln/error.hpp"

namespace kiln::frontend {

namespace {

/// A statement that binds a module-level name, with the tests of the
/// `if`/`while`/`for`/`with` statements around it (they decide whether it
/// runs, so they are read when it matters).
struct Binding {
  const Stmt *stmt;
  const ImportName *import = nullptr; ///< the name of an import statement that binds it
  std::vector<const Expr *> tests;
};

/// The last part of a decorator's callee: "jit" for `@triton.jit(...)`.
std::string decorator_name(const Expr &d) {
  const Expr &callee = d.kind == ExprKind::Call ? *d.children[0] : d;
  return callee.kind == ExprKind::Name || callee.kind == ExprKind::Attribute ? callee.id : "";
}

/// A def whose body kiln compiles or runs whenever it is bound: a jit
/// function (under an autotune or heuristics wrapper too) or a constexpr one.
bool runs_when_bound(const Stmt &def) {
  for (const ExprPtr &d : def.decorators) {
    const std::string n = decorator_name(*d);
    if (n == "jit" || n == "autotune" || n == "heuristics" || n == "constexpr" ||
        n == "constexpr_function")
      return true;
  }
  return false;
}

std::pair<std::string, std::string> split_first(const std::string &dotted) {
  const size_t dot = dotted.find('.');
  if (dot == std::string::npos)
    return {dotted, ""};
  return {dotted.substr(0, dot), dotted.substr(dot + 1)};
}

} // namespace

struct ImportDemand::Impl {
  struct File {
    std::string path;
    FileDemand demand;
    const Module *ast = nullptr;
    std::map<std::string, std::vector<Binding>> bindings;
    std::vector<Binding> stars; ///< `from x import *`
  };

  std::vector<std::string> search;
  std::map<std::string, std::unique_ptr<File>> files;
  File *root = nullptr;
  std::vector<std::pair<File *, std::string>> work;
  std::map<std::string, std::optional<std::string>> resolved;

  // ---- files -------------------------------------------------------------

  File &file(const std::string &path) {
    auto &slot = files[path];
    if (slot)
      return *slot;
    slot = std::make_unique<File>();
    File &f = *slot;
    f.path = path;
    try {
      f.demand.ast =
          parse(std::make_shared<const SourceFile>(path, read_source_file(path, "module")));
      f.ast = &*f.demand.ast;
      index(f, f.ast->body, {});
    } catch (const Error &) {
      f.demand.ast.reset(); // its load reports the error where an import needs it
      f.ast = nullptr;
    }
    return f;
  }

  /// The file `importer_path` imports as `dotted` (memoized: a file's
  /// names are processed again as their demand grows, and the analysis asks
  /// again for each import it loads).
  const std::optional<std::string> &resolve(const std::string &importer_path,
                                            const std::string &dotted, int level) {
    auto [it, fresh] =
        resolved.try_emplace(importer_path + '\0' + std::to_string(level) + '\0' + dotted);
    if (fresh)
      it->second = find_module_file(importer_path, dotted, level, search);
    return it->second;
  }

  File *find(const File &importer, const std::string &dotted, int level) {
    const std::optional<std::string> &path = resolve(importer.path, dotted, level);
    return path ? &file(*path) : nullptr;
  }

  /// Whether any import in `body` (at module level, or under an `if`,
  /// `try`, ... there) names a file: without one there is nothing to load.
  bool imports_a_file(const std::string &path, const Body &body) {
    for (const StmtPtr &p : body) {
      const Stmt &s = *p;
      if (s.kind == StmtKind::Import) {
        for (const ImportName &n : s.names)
          if (!is_modelled_import(n.name) && resolve(path, split_first(n.name).first, 0))
            return true;
      } else if (s.kind == StmtKind::ImportFrom) {
        const int level = import_level(s);
        const std::string module = s.module.substr(static_cast<size_t>(level));
        if ((level > 0 || !is_modelled_import(module)) && resolve(path, module, level))
          return true;
        if (level > 0) // `from . import utils` with no __init__.py
          for (const ImportName &n : s.names)
            if (resolve(path, module.empty() ? n.name : module + "." + n.name, level))
              return true;
      } else if (s.kind != StmtKind::FunctionDef && s.kind != StmtKind::AsyncFunctionDef &&
                 s.kind != StmtKind::ClassDef) {
        if (imports_a_file(path, s.body) || imports_a_file(path, s.orelse) ||
            imports_a_file(path, s.finalbody))
          return true;
        for (const ExceptHandler &h : s.handlers)
          if (imports_a_file(path, h.body))
            return true;
      }
    }
    return false;
  }

  /// Indexes the statements that bind each module-level name, as the
  /// analysis walks them (module_info.cpp's top_level).
  void index(File &f, const Body &body, const std::vector<const Expr *> &tests) {
    for (const StmtPtr &p : body) {
      const Stmt &s = *p;
      auto add = [&](const std::string &name, const ImportName *imp = nullptr) {
        f.bindings[name].push_back(Binding{&s, imp, tests});
      };
      auto nested = [&](std::initializer_list<const Expr *> more,
                        std::initializer_list<const Body *> bodies) {
        std::vector<const Expr *> t = tests;
        for (const Expr *e : more)
          if (e)
            t.push_back(e);
        for (const Body *b : bodies)
          index(f, *b, t);
      };
      switch (s.kind) {
      case StmtKind::FunctionDef:
      case StmtKind::AsyncFunctionDef:
      case StmtKind::ClassDef:
        add(s.id);
        break;
      case StmtKind::Assign:
        for (const ExprPtr &t : s.targets)
          target_names(*t, add);
        break;
      case StmtKind::AnnAssign:
      case StmtKind::AugAssign:
        if (s.targets[0]->kind == ExprKind::Name)
          add(s.targets[0]->id);
        break;
      case StmtKind::Import:
        for (const ImportName &n : s.names)
          add(n.alias.empty() ? split_first(n.name).first : n.alias, &n);
        break;
      case StmtKind::ImportFrom:
        for (const ImportName &n : s.names)
          if (n.name == "*")
            f.stars.push_back(Binding{&s, &n, tests});
          else
            add(n.alias.empty() ? n.name : n.alias, &n);
        break;
      case StmtKind::If:
        if (!is_name_main_test(*s.test))
          nested({s.test.get()}, {&s.body, &s.orelse});
        break;
      case StmtKind::While:
        nested({s.test.get()}, {&s.body, &s.orelse});
        break;
      case StmtKind::For:
      case StmtKind::AsyncFor:
        nested({s.value.get()}, {&s.body, &s.orelse});
        break;
      case StmtKind::With:
      case StmtKind::AsyncWith: {
        std::vector<const Expr *> t = tests;
        for (const WithItem &w : s.items)
          t.push_back(w.context_expr.get());
        index(f, s.body, t);
        break;
      }
      case StmtKind::Try:
      case StmtKind::TryStar:
        nested({}, {&s.body, &s.orelse, &s.finalbody});
        for (const ExceptHandler &h : s.handlers)
          index(f, h.body, tests);
        break;
      default:
        break;
      }
    }
  }

  template <class Add> static void target_names(const Expr &t, Add &add) {
    if (t.kind == ExprKind::Name)
      add(t.id);
    else if (t.kind == ExprKind::Tuple || t.kind == ExprKind::List || t.kind == ExprKind::Starred)
      for (const ExprPtr &c : t.children)
        if (c)
          target_names(*c, add);
  }

  // ---- demand ------------------------------------------------------------

  void need(File &f, const std::string &name, Need level, const std::string &attr = "") {
    auto [it, fresh] = f.demand.names.try_emplace(name);
    bool changed = fresh;
    if (it->second.need < level) {
      it->second.need = level;
      changed = true;
    }
    if (!attr.empty())
      changed |= it->second.attrs.insert(attr).second;
    if (changed)
      work.emplace_back(&f, name);
  }

  void everything(File &f) {
    if (f.demand.everything)
      return;
    f.demand.everything = true;
    for (const auto &[name, bs] : f.bindings)
      need(f, name, Need::Bind);
    for (const Binding &b : f.stars)
      if (File *t = star_target(f, b)) {
        use_tests(f, b);
        everything(*t);
      }
  }

  File *star_target(File &f, const Binding &b) {
    const int level = import_level(*b.stmt);
    const std::string module = b.stmt->module.substr(static_cast<size_t>(level));
    if (level == 0 && is_modelled_import(module))
      return nullptr;
    File *t = find(f, module, level);
    if (t)
      need(*t, "__all__", Need::Use); // which names the star binds
    return t;
  }

  void run() {
    while (!work.empty()) {
      auto [f, name] = work.back();
      work.pop_back();
      process(*f, name);
    }
  }

  /// Reads what binding `name` in `f` involves, at its current demand.
  void process(File &f, const std::string &name) {
    const FileDemand::Name d = f.demand.names.at(name); // a copy: `need` may grow the map
    if (auto it = f.bindings.find(name); it != f.bindings.end())
      for (const Binding &b : it->second)
        bound(f, b, d);
    // A name a star import may bind: the imported file is asked for it too.
    for (const Binding &b : f.stars)
      if (File *t = star_target(f, b)) {
        use_tests(f, b);
        ask(*t, name, d);
      }
  }

  void use_tests(File &f, const Binding &b) {
    for (const Expr *t : b.tests)
      use(f, *t);
  }

  /// Asks `t` for `name` as `d` needs it.
  void ask(File &t, const std::string &name, const FileDemand::Name &d) {
    need(t, name, d.need);
    for (const std::string &a : d.attrs)
      need(t, name, d.need, a);
  }

  /// Asks module file `t`, bound to a name needed as `d`, for what is read through it.
  void ask_module(File &t, const FileDemand::Name &d) {
    for (const std::string &a : d.attrs) {
      auto [head, rest] = split_first(a);
      need(t, head, Need::Use, rest);
    }
  }

  void bound(File &f, const Binding &b, const FileDemand::Name &d) {
    use_tests(f, b);
    const Stmt &s = *b.stmt;
    switch (s.kind) {
    case StmtKind::FunctionDef:
    case StmtKind::AsyncFunctionDef:
      for (const ExprPtr &dec : s.decorators)
        use(f, *dec);
      for (const Param &p : s.params) {
        if (p.annotation)
          use(f, *p.annotation);
        if (p.default_value)
          use(f, *p.default_value);
      }
      if (d.need == Need::Use || runs_when_bound(s))
        use(f, s.body);
      break;
    case StmtKind::Assign:
    case StmtKind::AnnAssign:
      if (s.value)
        use(f, *s.value);
      break;
    case StmtKind::For:
    case StmtKind::AsyncFor:
      use(f, *s.value);
      break;
    case StmtKind::With:
    case StmtKind::AsyncWith:
      for (const WithItem &w : s.items)
        use(f, *w.context_expr);
      break;
    case StmtKind::Import: {
      const ImportName &n = *b.import;
      if (is_modelled_import(n.name))
        break;
      if (File *t = find(f, n.alias.empty() ? split_first(n.name).first : n.name, 0))
        ask_module(*t, d);
      break;
    }
    case StmtKind::ImportFrom: {
      const int level = import_level(s);
      const std::string module = s.module.substr(static_cast<size_t>(level));
      if (level == 0 && is_modelled_import(module))
        break;
      const std::string &member = b.import->name;
      File *t = find(f, module, level);
      if (t)
        ask(*t, member, d);
      // `from . import utils` names a module when the package binds no such
      // member (or does not parse: the analysis then tries the module too).
      if (!t || !t->ast || !t->bindings.count(member))
        if (File *sub = find(f, module.empty() ? member : module + "." + member, level))
          ask_module(*sub, d);
      break;
    }
    default:
      break; // a class or an augmented assignment: a host name either way
    }
  }

  // ---- reads -------------------------------------------------------------

  void use(File &f, const Expr &e) {
    if (e.kind == ExprKind::Name) {
      need(f, e.id, Need::Use);
      return;
    }
    if (e.kind == ExprKind::Attribute) {
      // `a.b.c`: `a` is needed, and "b.c" is read through it.
      std::string chain = e.id;
      const Expr *base = e.children[0].get();
      while (base->kind == ExprKind::Attribute) {
        chain = base->id + "." + chain;
        base = base->children[0].get();
      }
      if (base->kind == ExprKind::Name) {
        need(f, base->id, Need::Use, chain);
        return;
      }
      use(f, *base);
      return;
    }
    for (const ExprPtr &c : e.children)
      if (c)
        use(f, *c);
    for (const Keyword &k : e.keywords)
      use(f, *k.value);
    for (const Param &p : e.params)
      if (p.default_value)
        use(f, *p.default_value);
  }

  void use(File &f, const Body &body) {
    for (const StmtPtr &s : body)
      use(f, *s);
  }

  void use(File &f, const Stmt &s) {
    auto opt = [&](const ExprPtr &e) {
      if (e)
        use(f, *e);
    };
    for (const ExprPtr &t : s.targets)
      opt(t);
    opt(s.value);
    opt(s.test);
    opt(s.annotation);
    for (const ExprPtr &d : s.decorators)
      opt(d);
    for (const Param &p : s.params) {
      opt(p.annotation);
      opt(p.default_value);
    }
    for (const Keyword &k : s.keywords)
      opt(k.value);
    for (const WithItem &w : s.items) {
      opt(w.context_expr);
      opt(w.optional_vars);
    }
    for (const ExceptHandler &h : s.handlers) {
      opt(h.type);
      use(f, h.body);
    }
    for (const MatchCase &c : s.cases) {
      opt(c.pattern);
      opt(c.guard);
      use(f, c.body);
    }
    use(f, s.body);
    use(f, s.orelse);
    use(f, s.finalbody);
  }
};

ImportDemand::ImportDemand(const Module &root, std::vector<std::string> search_path)
    : impl_(std::make_unique<Impl>()) {
  impl_->search = std::move(search_path);
  auto f = std::make_unique<Impl::File>();
  f->path = root.source->path();
  f->ast = &root;
  impl_->root = f.get();
  Impl::File &r = *f;
  impl_->files[f->path] = std::move(f);
  if (!impl_->imports_a_file(r.path, root.body)) {
    r.demand.everything = true; // a file of kernels alone: no scan at all
    return;
  }
  impl_->index(r, root.body, {});
  impl_->everything(r);
  impl_->run();
  for (auto &[path, file] : impl_->files) {
    file->bindings.clear(); // they point into trees now owned elsewhere
    file->stars.clear();
  }
}

ImportDemand::~ImportDemand() = default;

const FileDemand &ImportDemand::root() const {
  return impl_->root->demand;
}

FileDemand *ImportDemand::find(const std::string &path) {
  auto it = impl_->files.find(path);
  return it == impl_->files.end() || it->second.get() == impl_->root ? nullptr
                                                                     : &it->second->demand;
}

size_t ImportDemand::files() const {
  return impl_->files.size();
}

std::optional<std::string> ImportDemand::find_file(const std::string &importer_path,
                                                   const std::string &dotted, int level) {
  return impl_->resolve(importer_path, dotted, level);
}

} // namespace kiln::frontend
