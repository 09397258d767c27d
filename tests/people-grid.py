#!/usr/bin/env python3
"""The label-free estimate judged over many kinds of faces, and on real models.

  tests/people-grid.py [--draws N] [--faces N] [--first-seed S] [--build DIR] [--real DIR]

For each of N seeds, tests/make-family draws a family of faces (its recipe:
dimension, one person's spread, strangers' mean, spread and skew, look-alikes,
faces per person, group photos, low-quality crops) and writes a labelled
library; then `likeness-cli evaluate --calibrations --json` estimates a
calibration without the labels, fits one to them, and scores the people each
makes (BCubed). The same runs on every real model's library found in
--real (.ci/human-embed writes them: faceres, faceres-deep, mobilefacenet).

Printed: the grid's draws, the share whose estimate is within 0.02 of the
labels' F1, refusals (the estimate said it cannot place the bar), silent
merges (BCubed precision < 0.95 and no refusal) and the worst draw; then one
row per real model: the estimate, the labels' fit, connected components at
each bar, Immich's rule. Nothing is written into the libraries (evaluate
saves nothing); the draws live in a temporary folder.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WITHIN = 0.02
PRECISION = 0.95


def evaluate(cli, folder, env):
    run = subprocess.run([cli, "evaluate", "--calibrations", "--json", folder],
                         capture_output=True, text=True, env=env, check=False)
    if run.returncode != 0:
        sys.exit(f"people-grid: likeness-cli evaluate {folder} failed:\n{run.stderr}")
    d = json.loads(run.stdout)
    est = d.get("likeness_estimated")
    return {
        "refused": d["estimated"].get("failed"),
        "est_f1": est["bcubed"]["f1"] if est else None,
        "est_p": est["bcubed"]["precision"] if est else None,
        "est_cos": d["estimated"].get("cos_at_bar"),
        "fit_f1": d["likeness_fitted"]["bcubed"]["f1"],
        "fit_p": d["likeness_fitted"]["bcubed"]["precision"],
        "fit_cos": d["fitted"]["cos_at_bar"],
        "cc_est": d["connected_components_estimated"]["bcubed"]["f1"] if est else None,
        "cc_fit": d["connected_components_fitted"]["bcubed"]["f1"],
        "immich": d["immich_rule"]["bcubed"]["f1"],
        "immich_p": d["immich_rule"]["bcubed"]["precision"],
    }


def fmt(x, spec=".3f"):
    return "—" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=40)
    ap.add_argument("--faces", type=int, default=800, help="about this many faces a draw")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(ROOT, "_build"))
    ap.add_argument("--real", default=os.path.join(ROOT, "_build-dlib", "human"))
    args = ap.parse_args()
    cli = os.path.join(args.build, "app", "likeness-cli")
    make = os.path.join(args.build, "tests", "make-family")
    for exe in (cli, make):
        if not os.access(exe, os.X_OK):
            sys.exit(f"people-grid: {exe} is missing: meson compile -C {args.build} "
                     "likeness-cli make-family")
    tmp = tempfile.mkdtemp(prefix="people-grid-")
    # The scan cache goes into the temporary folder, not the user's.
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    try:
        rows = []
        for seed in range(args.first_seed, args.first_seed + args.draws):
            folder = os.path.join(tmp, f"draw-{seed}")
            subprocess.run([make, "--faces", str(args.faces), str(seed), folder],
                           check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(folder, "library.json"), encoding="utf-8") as f:
                family = json.load(f)["family"]
            r = evaluate(cli, folder, env)
            r["seed"], r["family"] = seed, family
            r["gap"] = None if r["refused"] else r["fit_f1"] - r["est_f1"]
            rows.append(r)
            print(f"seed {seed:3d}: dim {family['dim']:4d}, {family['people']:4d} people: "
                  f"estimate {'refused' if r['refused'] else fmt(r['est_f1'])} "
                  f"(P {fmt(r['est_p'])}, cos {fmt(r['est_cos'])}), labels {fmt(r['fit_f1'])} "
                  f"(P {fmt(r['fit_p'])}, cos {fmt(r['fit_cos'])})", file=sys.stderr)
            shutil.rmtree(folder)

        n = len(rows)
        within = [r for r in rows if r["gap"] is not None and r["gap"] <= WITHIN]
        refused = [r for r in rows if r["refused"]]
        silent = [r for r in rows if not r["refused"] and r["est_p"] < PRECISION]
        scored = [r for r in rows if r["gap"] is not None]
        print(f"## Grid: {n} draws of make-family, about {args.faces} faces each "
              f"(seeds {args.first_seed}-{args.first_seed + n - 1})\n")
        # A merge the labels' own fit makes too is the family's (look-alikes
        # closer than one person's faces), not the estimate's alone.
        both = [r for r in silent if r["fit_p"] < PRECISION]
        print("| draws | within 0.02 of the labels' F1 | refusals | silent merges "
              f"(precision < {PRECISION}, no refusal; the labels' fit too) | median gap "
              "(labels − estimate) | worst draw |")
        print("|---|---|---|---|---|---|")
        worst = max(scored, key=lambda r: r["gap"]) if scored else None
        gaps = sorted(r["gap"] for r in scored)
        median = gaps[len(gaps) // 2] if gaps else None
        worst_text = (f"seed {worst['seed']}: estimate {worst['est_f1']:.3f} vs labels "
                      f"{worst['fit_f1']:.3f} (P {worst['est_p']:.3f})") if worst else "—"
        print(f"| {n} | {len(within)} ({100 * len(within) / n:.0f} %) | {len(refused)} | "
              f"{len(silent)} ({len(both)}) | {fmt(median)} | {worst_text} |")
        if worst:
            print(f"\nworst draw's recipe: {json.dumps(worst['family'])}")
        if silent:
            print("silent merges: " + ", ".join(
                f"seed {r['seed']} (P {r['est_p']:.3f}, F1 {r['est_f1']:.3f}; labels P "
                f"{r['fit_p']:.3f}, F1 {r['fit_f1']:.3f})"
                for r in silent))
        if refused:
            print("refusals: " + ", ".join(
                f"seed {r['seed']} (labels {r['fit_f1']:.3f})" for r in refused))
        apart = [r for r in scored if r["gap"] > WITHIN]
        if apart:
            print("more than 0.02 below the labels: " + ", ".join(
                f"seed {r['seed']} ({r['est_f1']:.3f} vs {r['fit_f1']:.3f}, P {r['est_p']:.3f})"
                for r in sorted(apart, key=lambda r: -r["gap"])))

        models = sorted(m for m in os.listdir(args.real)
                        if os.path.isfile(os.path.join(args.real, m, "library.json"))) \
            if os.path.isdir(args.real) else []
        print(f"\n## Real models ({args.real})\n")
        if not models:
            print("none: run .ci/dlib-source, npm ci --prefix tests/human-embed, .ci/human-embed")
            return
        print("| model | faces | estimate F1 (precision, cos at p = 0.9) | labels F1 (precision, "
              "cos) | CC at the estimate's bar | CC at the labels' bar | Immich's rule "
              "(precision) |")
        print("|---|---|---|---|---|---|---|")
        for m in models:
            folder = os.path.join(args.real, m)
            with open(os.path.join(folder, "library.json"), encoding="utf-8") as f:
                faces = len(json.load(f)["faces"])
            r = evaluate(cli, folder, env)
            est = ("refused: " + r["refused"].split(" (")[0].split(":")[-1].strip()
                   if r["refused"] else
                   f"{r['est_f1']:.3f} ({r['est_p']:.3f}, {r['est_cos']:.3f})")
            print(f"| {m} | {faces} | {est} | {r['fit_f1']:.3f} ({r['fit_p']:.3f}, "
                  f"{r['fit_cos']:.3f}) | {fmt(r['cc_est'])} | {r['cc_fit']:.3f} | "
                  f"{r['immich']:.3f} ({r['immich_p']:.3f}) |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
