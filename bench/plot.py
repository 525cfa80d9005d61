#!/usr/bin/env python3
"""PNGs from a `kiln bench --json` document.

    bench/plot.py RESULTS.json [--out DIR]

Writes into DIR (default: the JSON's folder):
  compile_stages.png  compile latency by stage per kernel (the cold compile's
                      compiler stages, stacked; the whole cold run as a dot)
  warmup_scaling.png  warmup wall time and speedup against compile threads
  anchor_ratios.png   kiln / anchor per figure, when the run had --anchors
Needs matplotlib (Debian: python3-matplotlib; scripts/bootstrap installs it).
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="the JSON of `kiln bench --json`")
    ap.add_argument("--out", help="folder for the PNGs (default: the JSON's folder)")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only; no display on a build or GPU machine
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("bench/plot.py: matplotlib is not installed; install python3-matplotlib "
                 "(Debian; scripts/bootstrap does) or `pip install matplotlib`")
    try:
        with open(a.results) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"bench/plot.py: cannot read {a.results}: {e}")
    if not isinstance(doc, dict) or "backend" not in doc:
        sys.exit(f"bench/plot.py: {a.results} is not the JSON of `kiln bench --json`")
    out = a.out or os.path.dirname(os.path.abspath(a.results))
    os.makedirs(out, exist_ok=True)
    title = f"kiln bench, {doc['backend']}"
    written = []

    compile_ = doc.get("compile") or {}
    if compile_:
        kernels = list(compile_)
        stages = []
        for k in kernels:
            for s in compile_[k].get("stages_ms", {}):
                if s not in stages:
                    stages.append(s)
        fig, ax = plt.subplots(figsize=(9, 4.5), dpi=80)
        bottom = [0.0] * len(kernels)
        for s in stages:
            vals = [compile_[k].get("stages_ms", {}).get(s, 0.0) for k in kernels]
            ax.bar(kernels, vals, bottom=bottom, label=s)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.plot(kernels, [compile_[k]["cold_ms"] for k in kernels], "ko", label="whole cold run")
        ax.set_ylabel("ms")
        ax.set_title(f"{title}: cold compile by stage (median of fresh processes)")
        ax.tick_params(axis="x", rotation=45)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        written.append(save(fig, out, "compile_stages.png"))

    warm = doc.get("warmup")
    if warm and warm.get("threads"):
        fig, ax = plt.subplots(figsize=(6, 4), dpi=80)
        t, w = warm["threads"], warm["wall_s"]
        ax.plot(t, w, "o-", label="wall s")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("compile threads")
        ax.set_ylabel(f"s for {warm['specs']} specs")
        ax2 = ax.twinx()
        ax2.plot(t, [w[0] / x for x in w], "s--", color="tab:orange", label="speedup")
        ax2.plot(t, t, ":", color="gray", label="linear")
        ax2.set_ylabel("speedup over 1 thread")
        ax.set_title(f"{title}: warmup scaling")
        fig.legend(loc="upper center", fontsize=7, ncol=3, bbox_to_anchor=(0.5, 0.9))
        fig.tight_layout()
        written.append(save(fig, out, "warmup_scaling.png"))

    anchors = (doc.get("anchors") or {}).get("figures") or {}
    if anchors:
        keys = [k for k in anchors if anchors[k].get("ratio") is not None]
        fig, ax = plt.subplots(figsize=(8, 0.35 * len(keys) + 1.5), dpi=80)
        ratios = [anchors[k]["ratio"] for k in keys]
        ax.barh(keys, ratios)
        ax.axvline(1.0, color="k", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("kiln / anchor (times: lower is better; GB/s, TFLOP/s: higher)")
        ax.set_title(f"{title} beside {doc['anchors'].get('name', 'anchor')}")
        ax.tick_params(axis="y", labelsize=7)
        fig.tight_layout()
        written.append(save(fig, out, "anchor_ratios.png"))

    if not written:
        sys.exit(f"bench/plot.py: {a.results} has no compile, warmup or anchors section to plot")
    for w in written:
        print(w)


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path)
    return path


if __name__ == "__main__":
    main()
