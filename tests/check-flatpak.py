#!/usr/bin/env python3
"""check-flatpak.py MANIFEST APP_ID — the Flatpak manifest parses and says what we mean.

The manifest cannot be built here (flatpak-builder would fetch the GNOME runtime
over the network), so this checks what can be checked without it: it is valid
JSON, its id is the application id, it runs `likeness`, builds this tree with
meson and runs the tests, and asks for no permission beyond the four a GTK app
with a GPU needs. Library folders come through the file-chooser portal, so a
--filesystem grant (or network, or a session bus hole) is a regression.
"""
import json
import sys

ALLOWED_FINISH_ARGS = {"--socket=wayland", "--socket=fallback-x11", "--share=ipc", "--device=dri"}

path, app_id = sys.argv[1], sys.argv[2]
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
    if arg not in ALLOWED_FINISH_ARGS:
        problems.append(f"finish-arg {arg} is wider than needed (allowed: {sorted(ALLOWED_FINISH_ARGS)})")
for arg in sorted(ALLOWED_FINISH_ARGS - set(finish_args)):
    problems.append(f"finish-arg {arg} is missing: the window needs it")

modules = manifest.get("modules", [])
app = modules[-1] if modules else {}
if app.get("name") != "likeness":
    problems.append("the last module must be “likeness”, the app itself")
if app.get("buildsystem") != "meson":
    problems.append(f"module likeness: “buildsystem” is {app.get('buildsystem')!r}, expected 'meson'")
if app.get("run-tests") is not True:
    problems.append("module likeness: “run-tests” must be true")
if {"type": "dir", "path": ".."} not in [
    {k: s.get(k) for k in ("type", "path")} for s in app.get("sources", [])
]:
    problems.append("module likeness: sources must build this tree ({\"type\": \"dir\", \"path\": \"..\"})")

for problem in problems:
    print(f"{path}: {problem}")
if problems:
    sys.exit(1)
print(f"{path}: parses; id {app_id}, runtime {manifest['runtime']}//{manifest['runtime-version']}, "
      f"finish-args {' '.join(finish_args)}")
