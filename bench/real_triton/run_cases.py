#!/usr/bin/env python3
"""Compile every case of cases.jsonl with kiln for cpu and for cuda:sm_90 (ptx),
print a table, a summary and the failures grouped by cause; save results.json.

usage: python3 run_cases.py [--kiln PATH] [--jobs N] [--filter SUBSTR] [--verbose]
"""
import argparse, collections, json, os, re, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
KILN_DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin", "kiln")
TIMEOUT_S = 60
ROOT = HERE
TARGETS = [("cpu", ["--target", "cpu"]), ("cuda", ["--target", "cuda:sm_90", "--emit", "ptx"])]


def spec_word(v):
    if v is True: return "true"
    if v is False: return "false"
    if v is None: return "None"
    if isinstance(v, list): return "(" + ", ".join(spec_word(e) for e in v) + ")"  # a tuple parameter
    return str(v)


def command(kiln, case, target_args):
    cmd = [kiln, "compile", os.path.join(ROOT, case["file"]), case["kernel"]] + target_args
    opts = case.get("options", {})
    if "num_warps" in opts: cmd += ["--num-warps", str(opts["num_warps"])]
    if "num_stages" in opts: cmd += ["--num-stages", str(opts["num_stages"])]
    cmd += [f"{k}={spec_word(v)}" for k, v in case["args"].items()]
    return cmd


PTXAS = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)


def check_ptx(ptx):
    """Assemble kiln's PTX with ptxas (when this machine has it): 'ok' or ptxas's first error."""
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "k.ptx")
        open(f, "w").write(ptx)
        # The arch the PTX names (sm_90a where kiln uses wgmma).
        target = re.search(r"^\.target\s+(sm_\w+)", ptx, re.M)
        try:
            p = subprocess.run([PTXAS, "-arch=" + (target.group(1) if target else "sm_90"), f, "-o",
                                os.path.join(d, "k.cubin")],
                               capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "ptxas timeout"
        return "ok" if p.returncode == 0 else "ptxas: " + first_error_line(p.stderr or p.stdout)


def wait_for_binary(kiln):
    for _ in range(20):
        if os.path.isfile(kiln) and os.access(kiln, os.X_OK):
            return True
        print(f"[{kiln} missing; waiting 30 s]", file=sys.stderr)
        time.sleep(30)
    return False


def first_error_line(text):
    """The first line of the error; when that is only "FILE does not compile",
    the diagnostic that follows it ("FILE:L:C: message") is appended."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for i, l in enumerate(lines):  # prefer the line that says "error"
        if "error" in l.lower():
            if l.endswith("does not compile") and i + 1 < len(lines):
                return l + " | " + lines[i + 1]
            return l
    return lines[0] if lines else ""


def run_one(kiln, case, tname, targs, env):
    cmd = command(kiln, case, targs)
    for attempt in range(3):
        if not wait_for_binary(kiln):
            return {"status": "no-binary", "error": f"{kiln} missing", "secs": 0}
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S,
                               env=env, cwd=HERE)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "error": f"timeout after {TIMEOUT_S} s", "secs": TIMEOUT_S,
                    "cmd": cmd}
        except (FileNotFoundError, PermissionError, OSError) as e:  # binary replaced under us
            time.sleep(30); continue
        secs = round(time.time() - t0, 3)
        r = {"secs": secs, "rc": p.returncode, "cmd": cmd}
        if p.returncode == 0:
            r["status"] = "ok"
            r["out_bytes"] = len(p.stdout)
            if not p.stdout.strip():
                r["status"] = "empty-output"
                r["error"] = "exit 0 but nothing printed"
            elif tname == "cuda" and PTXAS:
                r["ptxas"] = check_ptx(p.stdout)
        elif p.returncode < 0 or p.returncode >= 128:
            sig = -p.returncode if p.returncode < 0 else p.returncode - 128
            r["status"] = "crash"
            r["error"] = f"killed by signal {sig}: " + first_error_line(p.stderr or p.stdout)
            r["stderr"] = (p.stderr or "")[-3000:]
        else:
            r["status"] = "error"
            r["error"] = first_error_line(p.stderr or p.stdout)
            r["stderr"] = (p.stderr or "")[:3000]
        return r
    return {"status": "no-binary", "error": "could not execute kiln", "secs": 0}


# ---- grouping errors by cause -------------------------------------------------------------
def cause_of(msg):
    m = msg.split(" | ", 1)[1] if " | " in msg else msg
    m = re.sub(r"^\S+?\.py:\d+:\d+: ", "", m)                         # "FILE:L:C: " of the diagnostic
    m = re.sub(r"^(kiln: )?error: ", "", m)
    m = re.sub(r"(/[\w.+-]+)+\.py", "FILE.py", m)                       # paths
    m = re.sub(r"FILE\.py:\d+(:\d+)?", "FILE.py:L", m)
    m = re.sub(r"\b(line|col|column) \d+", r"\1 N", m)
    m = re.sub(r":\d+:\d+", ":L:C", m)
    m = re.sub(r"^_?\w+: (?=missing|has no)", "", m)                    # leading "kernel_name: "
    m = re.sub(r"<[0-9x]+x(\w+)>", r"<SHAPE x \1>", m)                  # block shapes
    m = re.sub(r"; (run this kernel|compute in|use |assign the|a kernel can use).*$", "", m)  # advice
    m = re.sub(r"; it defines: .*$", "", m)
    m = re.sub(r"\(it defines none\)", "", m)
    # user identifiers (the construct names stay)
    m = re.sub(r"(named|parameter|key names|reads|call to|argument|no parameter|of) '[^']*'", r"\1 'X'", m)
    m = re.sub(r"which FILE.py:L binds", "which FILE binds", m)
    m = re.sub(r"^'[^']*' reads", "KERNEL reads", m)
    m = re.sub(r"\b\d+\b", "N", m)
    m = m.strip()
    return m[:160]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", default=os.environ.get("KILN", KILN_DEFAULT))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--filter", default="")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--root", default=HERE, help="folder the case files are relative to (default: this folder)")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "kiln_real_triton_results.json"))
    a = ap.parse_args()
    a.kiln = os.path.abspath(a.kiln)  # kiln runs from the case's folder
    global ROOT
    ROOT = os.path.abspath(a.root)

    cases = [json.loads(l) for l in open(os.path.join(HERE, "cases.jsonl")) if l.strip()]
    cases = [c for c in cases if a.filter in c["file"] + ":" + c["kernel"]]
    cache = tempfile.mkdtemp(prefix="kiln-corpus-cache-")
    env = dict(os.environ, KILN_CACHE_DIR=cache, KILN_ALWAYS_COMPILE="1")

    jobs = [(i, tname, targs) for i, _ in enumerate(cases) for tname, targs in TARGETS]
    results = [dict(file=c["file"], kernel=c["kernel"], args=c["args"], note=c.get("note")) for c in cases]
    with ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_one, a.kiln, cases[i], tname, targs, env): (i, tname) for i, tname, targs in jobs}
        for f, (i, tname) in futs.items():
            results[i][tname] = f.result()
    shutil.rmtree(cache, ignore_errors=True)

    # ---- table
    w = max(len(f"{r['file'].split('__')[0]}/{os.path.basename(r['file'])}:{r['kernel']}") for r in results)
    print(f"{'case':<{w}}  {'cpu':<8} {'cuda':<8} first error")
    for r in results:
        name = f"{r['file'].split('__')[0]}/{os.path.basename(r['file'])}:{r['kernel']}"
        err = r["cpu"].get("error") or r["cuda"].get("error") or ""
        print(f"{name:<{w}}  {r['cpu']['status']:<8} {r['cuda']['status']:<8} {err[:150]}")

    # ---- summary
    n = len(results)
    by_repo = collections.defaultdict(lambda: [0, 0, 0])
    for r in results:
        k = by_repo[r["file"].split("/")[0]]
        k[0] += 1; k[1] += r["cpu"]["status"] == "ok"; k[2] += r["cuda"]["status"] == "ok"
    cpu_ok = sum(r["cpu"]["status"] == "ok" for r in results)
    cuda_ok = sum(r["cuda"]["status"] == "ok" for r in results)
    both = sum(r["cpu"]["status"] == "ok" and r["cuda"]["status"] == "ok" for r in results)
    print(f"\nSUMMARY: {cpu_ok}/{n} compile for cpu, {cuda_ok}/{n} for cuda (sm_90 ptx), {both}/{n} both")
    for repo, (t, c, g) in sorted(by_repo.items()):
        print(f"  {repo:<28} cpu {c}/{t}  cuda {g}/{t}")
    if PTXAS:
        px = [r for r in results if r["cuda"].get("ptxas")]
        bad = [r for r in px if r["cuda"]["ptxas"] != "ok"]
        print(f"  ptxas (the PTX's own .target) accepts {len(px) - len(bad)}/{len(px)} of the PTX kiln emitted")
        for r in bad:
            print(f"    {r['file']}:{r['kernel']}: {r['cuda']['ptxas'][:200]}")
    slow = sorted(((r[t]["secs"], t, r) for r in results for t in ("cpu", "cuda") if r[t].get("secs", 0) > 5),
                  key=lambda x: -x[0])
    if slow:
        print("  slow compiles (> 5 s):")
        for s_, t, r in slow:
            print(f"    {s_:6.1f} s [{t}] {r['file']}:{r['kernel']} ({r[t]['status']})")
    odd = [(r, t) for r in results for t in ("cpu", "cuda") if r[t]["status"] in ("crash", "timeout", "empty-output", "no-binary")]
    if odd:
        print("\nCRASHES / TIMEOUTS / ODDITIES:")
        for r, t in odd:
            print(f"  [{t}] {r['file']}:{r['kernel']}: {r[t]['status']}: {r[t].get('error','')[:200]}")

    groups = collections.OrderedDict()
    for r in results:
        for t in ("cpu", "cuda"):
            if r[t]["status"] != "ok":
                c = cause_of(r[t].get("error", ""))
                g = groups.setdefault(c, {"count": 0, "cpu": 0, "cuda": 0, "examples": []})
                g["count"] += 1; g[t] += 1
                ex = f"{os.path.basename(r['file'])}:{r['kernel']}"
                if ex not in [e[0] for e in g["examples"]]:
                    g["examples"].append((ex, r[t].get("error", "")))
    print("\nFAILURES BY CAUSE (count = failing compiles; cpu/cuda split):")
    for c, g in sorted(groups.items(), key=lambda kv: -kv[1]["count"]):
        print(f"  {g['count']:3d} (cpu {g['cpu']}, cuda {g['cuda']})  {c}")
        for ex, full in g["examples"][: (99 if a.verbose else 1)]:
            print(f"        e.g. {ex}: {full[:220]}")

    out = {"kiln": a.kiln, "time": time.strftime("%Y-%m-%d %H:%M:%S"), "cases": n, "cpu_ok": cpu_ok,
           "cuda_ok": cuda_ok, "both_ok": both, "by_repo": {k: dict(cases=v[0], cpu_ok=v[1], cuda_ok=v[2]) for k, v in by_repo.items()},
           "causes": [{"cause": c, **{k: v for k, v in g.items() if k != "examples"},
                       "examples": [e for e, _ in g["examples"]]} for c, g in
                      sorted(groups.items(), key=lambda kv: -kv[1]["count"])],
           "results": results}
    json.dump(out, open(a.out, "w"), indent=1)
    print(f"\nresults: {a.out}")


if __name__ == "__main__":
    main()
