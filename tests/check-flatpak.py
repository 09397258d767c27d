#!/usr/bin/env python3
"""check-flatpak.py MANIFEST APP_ID MESON_OPTIONS [CI_DIR] — the manifest says what we mean.

.ci/flatpak builds the manifest for real (flatpak-builder, a Debian-made
stand-in for GNOME's runtime) and runs the app in its sandbox; this test is
the quick, offline half that runs in every build:

* it is valid JSON with the application id, runs `likeness`, on
  org.gnome.Platform / org.gnome.Sdk, and the last module is this tree built
  with meson, its tests run;
* the finish-args are exactly the ones flatpak/README.md's permissions section
  justifies (a new permission must be argued there and added here);
* every feature option of meson_options.txt is enabled explicitly in the
  app's config-opts (-Dname=enabled), so a dependency missing from the
  runtime fails the build instead of silently dropping the feature;
* every other module is pinned: each archive/file source has an https URL
  and a SHA-256, each git source a commit;
* the dir source skips every _build* folder the CI scripts in CI_DIR make,
  so a build never copies another build (or the runtime trees) into itself.
"""
import json
import os
import re
import sys

# Each one is justified in flatpak/README.md, section "Permissions".
FINISH_ARGS = [
    "--socket=wayland",
    "--socket=fallback-x11",
    "--share=ipc",
    "--device=dri",
    "--share=network",
    "--filesystem=xdg-pictures",
]

path, app_id, options = sys.argv[1], sys.argv[2], sys.argv[3]
ci_dir = sys.argv[4] if len(sys.argv) > 4 else None
problems = []
with open(path, encoding="utf-8") as f:
    try:
        manifest = json.load(f)
    except json.JSONDecodeError as e:
        sys.exit(f"{path}: not valid JSON: {e}")


def expect(field, want):
    got = manifest.get(field)
    if got != want:
        problems.append(f"“{field}” is {got!r}, expected {want!r}")


expect("id", app_id)
expect("command", "likeness")
expect("runtime", "org.gnome.Platform")
expect("sdk", "org.gnome.Sdk")
if not isinstance(manifest.get("runtime-version"), str):
    problems.append("“runtime-version” must be a string such as \"51\"")

finish_args = manifest.get("finish-args", [])
for arg in finish_args:
    if arg not in FINISH_ARGS:
        problems.append(f"finish-arg {arg} is not one flatpak/README.md justifies (allowed: {FINISH_ARGS})")
for arg in FINISH_ARGS:
    if arg not in finish_args:
        problems.append(f"finish-arg {arg} is missing (flatpak/README.md says why it is needed)")

modules = manifest.get("modules", [])
app = modules[-1] if modules else {}
if app.get("name") != "likeness":
    problems.append("the last module must be “likeness”, the app itself")
if app.get("buildsystem") != "meson":
    problems.append(f"module likeness: “buildsystem” is {app.get('buildsystem')!r}, expected 'meson'")
if app.get("run-tests") is not True:
    problems.append("module likeness: “run-tests” must be true")
dirs = [s for s in app.get("sources", []) if s.get("type") == "dir" and s.get("path") == ".."]
if not dirs:
    problems.append("module likeness: sources must build this tree ({\"type\": \"dir\", \"path\": \"..\"})")

with open(options, encoding="utf-8") as f:
    features = re.findall(r"option\(\s*'([^']+)'\s*,\s*type\s*:\s*'feature'", f.read())
opts = app.get("config-opts", [])
for feature in features:
    if f"-D{feature}=enabled" not in opts:
        problems.append(f"module likeness: feature “{feature}” ({options}) is not enabled "
                        f"explicitly: add -D{feature}=enabled to its config-opts")


def check_pinned(ms):
    for m in ms:
        if isinstance(m, str):
            problems.append(f"module file {m}: inline it (the CI manifest script reads one file)")
            continue
        if m is app:
            continue
        for s in m.get("sources", []):
            kind = s.get("type")
            if kind in ("archive", "file"):
                if not str(s.get("url", "")).startswith("https://"):
                    problems.append(f"module {m.get('name')}: {kind} source without an https URL")
                if not re.fullmatch(r"[0-9a-f]{64}", str(s.get("sha256", ""))):
                    problems.append(f"module {m.get('name')}: {s.get('url')} is not pinned by SHA-256")
            elif kind == "git":
                if not re.fullmatch(r"[0-9a-f]{40}", str(s.get("commit", ""))):
                    problems.append(f"module {m.get('name')}: git source not pinned by commit")
            else:
                problems.append(f"module {m.get('name')}: source type {kind!r} is not pinned")
        check_pinned(m.get("modules", []))


check_pinned(modules)

if ci_dir is not None and dirs:
    made = set()
    for name in sorted(os.listdir(ci_dir)):
        p = os.path.join(ci_dir, name)
        if os.path.isfile(p):
            with open(p, encoding="utf-8", errors="replace") as f:
                made.update(re.findall(r"\b(_build[-A-Za-z0-9]*)", f.read()))
    skipped = set(dirs[0].get("skip", []))
    for d in sorted(made - skipped):
        problems.append(f"module likeness: the dir source does not skip {d}, which {ci_dir} makes")

for problem in problems:
    print(f"{path}: {problem}")
if problems:
    sys.exit(1)
print(f"{path}: parses; id {app_id}, runtime {manifest['runtime']}//{manifest['runtime-version']}, "
      f"{len(modules)} modules, features {', '.join(features)} enabled, "
      f"finish-args {' '.join(finish_args)}")
