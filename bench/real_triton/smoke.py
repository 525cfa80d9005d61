#!/usr/bin/env python3
"""Compile every @triton.jit kernel under a folder with a *guessed*
specialization and group the failures by cause.

A discovery tool, not a contract: cases.jsonl holds hand-checked
specializations; this one guesses (pointer-like names get *fp32, tl.constexpr
parameters their default or a value picked from the name, the rest i32), so
some failures are wrong guesses ("expects a pointer", a static_assert). The
causes that name a missing language feature are what it is for.

usage: python3 smoke.py ROOT [--kiln PATH] [--target cpu|cuda] [--jobs N] [--limit N]
"""
import argparse, ast, collections, os, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
KILN_DEFAULT = os.path.join(HERE, "..", "..", "build", "bin", "kiln")

def is_jit(dec):
    text = ast.unparse(dec)
    return re.search(r"\bjit\b", text) is not None


def kernels_in(path):
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(is_jit(d) for d in node.decorator_list):
            out.append(node)
    return out


def constexpr_guess(name):
    n = name.upper()
    if n.startswith(("IS_", "HAS_", "USE_", "ENABLE_", "EVEN_", "RETURN_", "NEED_", "ALLOW_")) or n in (
            "CAUSAL", "TRANS", "DESCENDING", "INPLACE"):
        return "false"
    if "DTYPE" in n or n.endswith("_TY") or n.endswith("_TYPE"):
        return None  # no good guess
    if "STAGE" in n:
        return 1
    if "GROUP" in n:
        return 8
    if n.startswith("BLOCK") or n.endswith("BLOCK") or "BLOCK_SIZE" in n or n.startswith("TILE") or n.startswith(
            "BL") or n in ("BM", "BN", "BK", "BS", "BT", "BD", "BV"):
        return 64
    if n.startswith("NUM_") or n.startswith("N_") or n.endswith("_NUM"):
        return 2
    if "DIM" in n or n in ("D", "HEAD_DIM", "K", "N", "M", "H", "L"):
        return 64
    return 16


STRIDE_LIKE = re.compile(r"stride|offset|^off|_off|idx|index|numel|^n$|^m$|^k$|^n_|_size$|^size|len|num|dim|count")


def names_in(e):
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


def pointer_names(fn):
    """Names that flow into the pointer argument of a load or store (through
    assignments), without the stride-like ones: a guess at the pointers."""
    seeds, assigns = set(), []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = ast.unparse(node.func)
            if f.endswith(("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg",
                           "make_block_ptr", "make_tensor_descriptor")) and node.args:
                seeds |= names_in(node.args[0])
            for kw in node.keywords:
                if kw.arg in ("pointer", "base"):
                    seeds |= names_in(kw.value)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None:
                assigns.append(({n for t in targets for n in names_in(t)}, names_in(node.value)))
    ptr = set(seeds)
    changed = True
    while changed:
        changed = False
        for targets, sources in assigns:
            if targets & ptr and not sources <= ptr:
                ptr |= sources
                changed = True
    return {n for n in ptr if not STRIDE_LIKE.search(n.lower())}, bool(seeds)


def spec_for(fn):
    args = fn.args
    params = args.posonlyargs + args.args + args.kwonlyargs
    defaults = [None] * (len(args.posonlyargs + args.args) - len(args.defaults)) + list(args.defaults) + list(
        args.kw_defaults)
    ptrs, has_memory = pointer_names(fn)
    words = []
    for p, d in zip(params, defaults):
        ann = ast.unparse(p.annotation) if p.annotation is not None else ""
        if ann.endswith("constexpr"):
            if d is not None:
                continue  # kiln compile applies defaults
            g = constexpr_guess(p.arg)
            if g is None:
                return None
            words.append(f"{p.arg}={g}")
            continue
        if d is not None and isinstance(d, ast.Constant) and d.value is None:
            words.append(f"{p.arg}=None")
            continue
        low = p.arg.lower()
        if not has_memory:
            words.append(f"{p.arg}=fp32")  # a helper on values (pointwise bodies)
        elif p.arg in ptrs or low.endswith("ptr"):
            words.append(f"{p.arg}=*fp32:D")
        elif "eps" in low or "alpha" in low or "beta" in low or "scale" in low or low in ("p", "value", "theta"):
            words.append(f"{p.arg}=fp32")
        else:
            words.append(f"{p.arg}=i32")
    return words


def first_error(text):
    lines = [l for l in text.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if "does not compile" in l and i + 1 < len(lines):
            return lines[i + 1]
        if l.startswith("error:"):
            return l
    return lines[0] if lines else "(no message)"


def cause_of(msg):
    msg = re.sub(r"^\S+\.py:\d+:\d+: ", "", msg)
    msg = re.sub(r"^error: ", "", msg)
    msg = re.sub(r"'[^']*'", "'X'", msg)
    msg = re.sub(r"\d+", "N", msg)
    return msg[:150]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--kiln", default=KILN_DEFAULT)
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--examples", type=int, default=2)
    a = ap.parse_args()
    a.kiln = os.path.abspath(a.kiln)
    todo = []
    for dirpath, _, files in os.walk(a.root):
        for f in sorted(files):
            if f.endswith(".py"):
                p = os.path.join(dirpath, f)
                for fn in kernels_in(p):
                    todo.append((p, fn.name, spec_for(fn)))
    todo.sort()
    if a.limit:
        todo = todo[:a.limit]
    target = ["--target", "cpu"] if a.target == "cpu" else ["--target", "cuda:sm_90", "--emit", "ptx"]

    def one(item):
        path, name, words = item
        if words is None:
            return item, "skip", "no guess for a dtype constexpr"
        cmd = [a.kiln, "compile", path, name] + target + words
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=os.path.dirname(path))
        except subprocess.TimeoutExpired:
            return item, "fail", "timeout (60 s)"
        return item, ("ok" if r.returncode == 0 else "fail"), first_error(r.stderr)

    with ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(one, todo))
    counts = collections.Counter(st for _, st, _ in results)
    print(f"{len(results)} kernels: {counts['ok']} compile, {counts['fail']} fail, {counts['skip']} skipped")
    by = collections.defaultdict(list)
    for item, st, msg in results:
        if st == "fail":
            by[cause_of(msg)].append((item, msg))
    for cause, items in sorted(by.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(items):4d}  {cause}")
        for (path, name, _), msg in items[:a.examples]:
            print(f"        {os.path.relpath(path, a.root)}:{name}: {msg[:200]}")


if __name__ == "__main__":
    sys.exit(main())
