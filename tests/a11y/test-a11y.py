#!/usr/bin/python3
"""The review through AT-SPI, as a screen reader and GNOME's QA reach it.

The window runs on its own Xvfb, with a private D-Bus session
(dbus-run-session) and the AT-SPI bus and registry (at-spi-bus-launcher,
which activates at-spi2-registryd), GTK_A11Y at its default. The test reads
only the accessible tree and acts only through AT-SPI actions and key
events the registry synthesizes (XTest), never through the window's code:

- the people grid is found by its role (table) and name ("People"), and
  every person in it is a tile named as a sighted user reads it
  ("Unnamed person, 12 faces");
- no button in the window is nameless (an icon-only button must say what
  it does);
- a rename: the focus moved to a person by arrow keys, Enter, F2, a name
  typed, Enter; review.json holds the name and the grid shows
  "Name, N faces" after Back;
- a merge: Select (its AT-SPI action), two people selected with
  Shift+Right, Merge Selected (its action); review.json holds the merge
  and the grid one person fewer, whose count is the two counts' sum (two
  people who share a photo are refused, and the refusal is read from the
  tree: then the next two);
- Ctrl+Z: review.json's redo list holds the merge, the grid as many
  people as before.

Usage (meson runs it): test-a11y.py LIKENESS SAMPLE_LIBRARY SCHEMA_DIR
Exit 77 (skipped) when python3-pyatspi or Xvfb is missing, unless
LK_TEST_REQUIRE_ATSPI is set (CI sets it): then that is a failure.
"""
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
# Generous: the machine running the suite may be loaded, and a wait ends
# as soon as its condition holds.
TIMEOUT = float(os.environ.get("LK_A11Y_TIMEOUT", "180"))


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def missing_tools():
    """What this test needs and this machine lacks, or None."""
    try:
        import gi

        gi.require_version("Atspi", "2.0")
        import pyatspi  # noqa: F401
    except (ImportError, ValueError) as e:
        return f"python3-pyatspi ({e})"
    for tool in ("Xvfb", "dbus-run-session"):
        if shutil.which(tool) is None:
            return tool
    if launcher() is None:
        return "at-spi-bus-launcher (at-spi2-core)"
    return None


def launcher():
    for path in ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher"):
        if os.access(path, os.X_OK):
            return path
    return shutil.which("at-spi-bus-launcher")


def start_xvfb():
    """An X server of the test's own: the keys it presses go to its window,
    not to another display test's that shares xvfb-run's server."""
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(write)
    number = b""
    while not number.endswith(b"\n"):
        chunk = os.read(read, 16)
        if not chunk:
            raise RuntimeError("Xvfb exited before it chose a display")
        number += chunk
    os.close(read)
    return xvfb, ":" + number.decode().strip()


def outer(argv):
    """Xvfb, then this script again inside dbus-run-session; every process
    they started ends with them (one process group, killed at the end)."""
    why = missing_tools()
    if why is not None:
        if os.environ.get("LK_TEST_REQUIRE_ATSPI"):
            log(f"FAIL: {why} is missing, and LK_TEST_REQUIRE_ATSPI is set")
            return 1
        log(f"SKIP: {why} is missing")
        return SKIP
    xvfb, display = start_xvfb()
    env = dict(os.environ, DISPLAY=display, LK_A11Y_INNER="1")
    env.pop("WAYLAND_DISPLAY", None)
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    env.pop("AT_SPI_BUS_ADDRESS", None)
    session = subprocess.Popen(
        ["dbus-run-session", "--", sys.executable, os.path.abspath(sys.argv[0])] + argv,
        env=env,
        start_new_session=True,
    )
    try:
        status = session.wait(timeout=TIMEOUT * 4)
    except subprocess.TimeoutExpired:
        log("FAIL: the test did not end in time")
        status = 1
    finally:
        for proc in (session, xvfb):
            leftovers = kill_group(proc.pid)
            if leftovers:
                log(f"note: killed processes left in group {proc.pid}")
        xvfb.wait()
    return status


def kill_group(pgid):
    """Ends what is left of a process group; True if anything was."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return True


# ---- inside the private D-Bus session ---------------------------------------

pyatspi = None


def wait_for(what, probe, timeout=TIMEOUT):
    """probe() until it returns something true; fails naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = probe()
        except Exception as e:  # the tree changes under a walk: try again
            value = None
            last = e
        else:
            last = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f" ({last})" if last else ""))
        time.sleep(0.1)


def children(acc):
    for k in range(acc.childCount):
        child = acc.getChildAtIndex(k)
        if child is not None:
            yield child


def walk(acc):
    """Every descendant of acc, depth first; what is hidden is left out with
    its subtree. (GTK 4.8 never sets SHOWING, and keeps a stack's other
    pages VISIBLE: a walk sees every page.)"""
    for child in children(acc):
        if not child.getState().contains(pyatspi.STATE_VISIBLE):
            continue
        yield child
        yield from walk(child)


def find(root, role, name=None, prefix=None):
    for acc in walk(root):
        if acc.getRole() != role:
            continue
        if name is not None and acc.name != name:
            continue
        if prefix is not None and not acc.name.startswith(prefix):
            continue
        return acc
    return None


def find_button(root, label):
    """GTK 4.8 names a button with a mnemonic "_Select Select"; a screen
    reader says the part after the underline's copy, so match its end."""
    for acc in walk(root):
        if acc.getRole() in (pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_TOGGLE_BUTTON):
            if acc.name == label or acc.name.endswith(" " + label):
                return acc
    return None


def tiles(grid):
    """The people the grid shows (its cells made so far), as (name, faces)
    pairs read from each cell's image."""
    people = []
    for acc in walk(grid):
        if acc.getRole() == pyatspi.ROLE_IMAGE:
            person = parse_tile(acc.name)
            if person is not None:
                people.append(person)
    return people


def parse_tile(name):
    """("Ada Lovelace", 58) from "Ada Lovelace, 58 faces", else None."""
    match = re.fullmatch(r"(.+), ([\d,\u202f]+) faces?( · hidden)?", name or "")
    if match is None:
        return None
    return match.group(1), int(re.sub(r"\D", "", match.group(2)))


def path(acc):
    """Where acc is: its named ancestors, nearest first."""
    names = []
    acc = acc.parent
    while acc is not None and acc.getRole() != pyatspi.ROLE_FRAME:
        if acc.name:
            names.append(f"{acc.getRoleName()} {acc.name!r}")
        acc = acc.parent
    return " < ".join(names[:3]) or "the window"


def people_count(frame):
    """(named, people) from the grid's "2 of 275 people named" line."""
    for acc in walk(frame):
        if acc.getRole() == pyatspi.ROLE_LABEL:
            match = re.fullmatch(r"([\d,]+) of ([\d,]+) people named", acc.name)
            if match:
                return tuple(int(g.replace(",", "")) for g in match.groups())
    return None


def focused(root):
    for acc in walk(root):
        if acc.getState().contains(pyatspi.STATE_FOCUSED):
            return acc
    return None


def focused_person(root):
    """The name of the person tile the keyboard focus is on (the focused
    cell's name, or its image's), or None."""
    acc = focused(root)
    if acc is None:
        return None
    return acc.name if parse_tile(acc.name) is not None else None


def key(keysym_name):
    pyatspi.Registry.generateKeyboardEvent(keysym(keysym_name), None, pyatspi.KEY_SYM)


def keysym(name):
    import ctypes

    x11 = ctypes.CDLL("libX11.so.6")
    x11.XStringToKeysym.restype = ctypes.c_ulong
    x11.XStringToKeysym.argtypes = [ctypes.c_char_p]
    value = x11.XStringToKeysym(name.encode())
    if value == 0:
        raise ValueError(f"no keysym {name}")
    return value


def keycode(keysym_name):
    """The X server's keycode for a keysym: the registry presses and releases
    keys apart only by keycode (a keysym is always pressed and released)."""
    import ctypes

    x11 = ctypes.CDLL("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XKeysymToKeycode.restype = ctypes.c_ubyte
    x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    display = x11.XOpenDisplay(None)
    if not display:
        raise AssertionError("cannot open the X display for its keycodes")
    code = x11.XKeysymToKeycode(display, keysym(keysym_name))
    x11.XCloseDisplay(display)
    if code == 0:
        raise AssertionError(f"the X server has no key for {keysym_name}")
    return code


def key_with(modifier, keysym_name):
    """A key pressed with Shift, Control or Alt held, through the registry."""
    mod = keycode({"Shift": "Shift_L", "Control": "Control_L", "Alt": "Alt_L"}[modifier])
    pyatspi.Registry.generateKeyboardEvent(mod, None, pyatspi.KEY_PRESS)
    pyatspi.Registry.generateKeyboardEvent(keycode(keysym_name), None, pyatspi.KEY_PRESSRELEASE)
    pyatspi.Registry.generateKeyboardEvent(mod, None, pyatspi.KEY_RELEASE)


def type_text(text):
    pyatspi.Registry.generateKeyboardEvent(0, text, pyatspi.KEY_STRING)


def click(acc):
    action = acc.queryAction()
    for k in range(action.nActions):
        if action.getName(k) == "click":
            action.doAction(k)
            return
    raise AssertionError(f"{acc.getRoleName()} {acc.name!r} has no click action")


def decisions(library, log_name="decisions"):
    """review.json's decisions (or its redo list: what undo took back)."""
    path = os.path.join(library, "review.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get(log_name, [])
    except (FileNotFoundError, json.JSONDecodeError):
        return []


def find_app(name):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in children(desktop):
        if app.name == name:
            return app
    return None


def move_focus_to(frame, wanted):
    """Arrows from the grid's first cell until the focus is on a person
    whose tile satisfies wanted(name)."""
    key("Home")
    seen = []
    for _ in range(200):
        name = wait_for("a focused person tile", lambda: focused_person(frame), 20)
        if wanted(name):
            return name
        if seen and seen[-1] == name:
            raise AssertionError(f"Right stopped at {name!r}; the people were {seen}")
        seen.append(name)
        key("Right")
        wait_for("the focus to move", lambda: focused_person(frame) != name, 20)
    raise AssertionError("no such person")


def inner(argv):
    global pyatspi
    likeness, sample, schemas = argv
    work = tempfile.mkdtemp(prefix="lk-a11y-")
    library = os.path.join(work, "library")
    shutil.copytree(sample, library)
    bus = subprocess.Popen([launcher(), "--launch-immediately"])
    app = None
    try:
        import pyatspi as module

        pyatspi = module
        env = dict(os.environ)
        # The test is about the accessible tree: GTK's default backend, AT-SPI.
        env.pop("GTK_A11Y", None)
        env.pop("NO_AT_BRIDGE", None)
        env.update(
            HOME=work,
            XDG_CONFIG_HOME=os.path.join(work, "config"),
            XDG_CACHE_HOME=os.path.join(work, "cache"),
            XDG_DATA_HOME=os.path.join(work, "data"),
            GSETTINGS_BACKEND="memory",
            GSETTINGS_SCHEMA_DIR=schemas,
            GSK_RENDERER="cairo",
            ADW_DISABLE_PORTAL="1",
            LANGUAGE="C",
            LC_ALL="C.UTF-8",
        )
        app = subprocess.Popen([likeness, library], env=env)
        run(app, library)
        return 0
    except AssertionError as e:
        log(f"FAIL: {e}")
        if os.environ.get("LK_A11Y_DUMP") and app is not None:
            dump(find_app("likeness"))
        return 1
    finally:
        if app is not None:
            app.terminate()
            app.wait()
        bus.terminate()
        bus.wait()
        shutil.rmtree(work, ignore_errors=True)


def dump(acc, depth=0):
    if acc is None:
        return
    try:
        log("  " * depth + f"[{acc.getRoleName()}] {acc.name!r}")
        for child in children(acc):
            dump(child, depth + 1)
    except Exception as e:
        log("  " * depth + f"({e})")


def run(app, library):
    frame = wait_for(
        "the window in the accessible tree",
        lambda: next(
            (f for f in children(find_app("likeness") or []) if f.getRole() == pyatspi.ROLE_FRAME),
            None,
        ),
    )
    grid = wait_for("the people grid (a table named People)",
                    lambda: find(frame, pyatspi.ROLE_TABLE, name="People"))
    people = wait_for("person tiles named “Name, N faces”", lambda: tiles(grid))
    named, total = wait_for("the line “N of M people named”", lambda: people_count(frame))
    log(f"ok: the grid shows {total} people, the first {people[0]}")

    nameless = [
        f"{acc.getRoleName()} {acc.name!r} in {path(acc)}" for acc in walk(frame)
        if acc.getRole() in (pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_TOGGLE_BUTTON,
                             pyatspi.ROLE_ENTRY, pyatspi.ROLE_TABLE_CELL, pyatspi.ROLE_IMAGE)
        and (not acc.name or acc.name.startswith("Gtk"))
    ]
    kinds = {k: nameless.count(k) for k in nameless}
    assert not nameless, f"{len(nameless)} controls have no name: " + "; ".join(
        f"{n} × {k}" for k, n in kinds.items())
    log("ok: every button, entry, cell and image has a name")

    # The rename, by keyboard alone.
    target = move_focus_to(frame, lambda n: n.startswith("Unnamed person, "))
    faces = parse_tile(target)[1]
    key("Return")
    wait_for("the person page (its faces, a table named Faces)",
             lambda: find(frame, pyatspi.ROLE_TABLE, name="Faces"))
    wait_for("the focus on the person's first face",
             lambda: (focused(frame) is not None
                      and focused(frame).name.startswith(f"Face 1 of {faces}. ")))
    log(f"ok: the person page is open, the focus on {focused(frame).name!r}")
    # F2 edits the name. (GTK 4.8 does not put the text it edits in into
    # the tree, so the test checks what typing into it does.)
    key("F2")
    type_text("Ada Lovelace")
    key("Return")
    wait_for("a rename to “Ada Lovelace” in review.json",
             lambda: [d for d in decisions(library) if d.get("op") == "name"
                      and d.get("name") == "Ada Lovelace"])
    log("ok: review.json names Ada Lovelace")
    name = wait_for("the person page's Name", lambda: next(
        (a for a in walk(frame) if a.name == "Name" and a.getRole() != pyatspi.ROLE_TABLE), None))
    wait_for("the Name to read Ada Lovelace",
             lambda: find(name, pyatspi.ROLE_LABEL, name="Ada Lovelace"))
    wait_for("the notification “Named “Ada Lovelace””",
             lambda: find(frame, pyatspi.ROLE_LABEL, name="Named “Ada Lovelace”"))
    key_with("Alt", "Left")
    wait_for(f"the focus back on “Ada Lovelace, {faces} faces”",
             lambda: focused_person(frame) == f"Ada Lovelace, {faces} faces")
    assert people_count(frame) == (named + 1, total), people_count(frame)
    log(f"ok: back in the grid on Ada Lovelace, {faces} faces; {named + 1} of {total} named")

    # The merge: Select (its action), two people side by side by
    # Shift+Right, Merge Selected (its action). Two people with faces in one
    # photo cannot merge (the refusal says so, and is in the tree too): then
    # the next two.
    select = wait_for("the Select button", lambda: find_button(frame, "Select"))
    merge = wait_for("the Merge Selected button", lambda: find_button(frame, "Merge Selected"))
    for position in range(1, 20):
        click(select)
        wait_for("the selection mode", lambda: is_on(select))
        key("Home")
        for _ in range(position):
            key("Right")
        first = wait_for(f"the focus on an unnamed person, {position} after the first",
                         lambda: (focused_person(frame) or "").startswith("Unnamed person, ")
                         and focused_person(frame))
        key_with("Shift", "Right")
        wait_for("Merge Selected enabled",
                 lambda: merge.getState().contains(pyatspi.STATE_SENSITIVE))
        second = focused_person(frame)
        click(merge)
        outcome = wait_for("a merge in review.json, or its refusal", lambda: (
            [d for d in decisions(library) if d.get("op") == "merge"]
            or find_label(frame, "two faces of one photo are never one person")))
        if isinstance(outcome, list):
            break
        log(f"ok: {first!r} and {second!r} share a photo, and the refusal says so: "
            f"{outcome.name!r}")
        key("Escape")
        if is_on(select):
            click(select)
        wait_for("the selection mode left",
                 lambda: not is_on(select))
    else:
        raise AssertionError("no two people side by side could merge")
    log(f"ok: review.json holds a merge of {len(outcome[0].get('faces', []))} faces")
    size = parse_tile(first)[1] + parse_tile(second)[1]
    wait_for(f"one person fewer, and one of {size} faces",
             lambda: people_count(frame) == (named + 1, total - 1)
             and any(n == size for _, n in tiles(grid)))
    log(f"ok: {first!r} and {second!r} are one person of {size} faces; {total - 1} people")

    # Undo, by keyboard: the merge is taken back, in the file and the grid.
    key_with("Control", "z")
    wait_for("the merge moved to review.json's redo list",
             lambda: [d for d in decisions(library, "redo") if d.get("op") == "merge"]
             and not [d for d in decisions(library) if d.get("op") == "merge"])
    wait_for(f"{total} people again", lambda: people_count(frame) == (named + 1, total))
    log(f"ok: Ctrl+Z undid the merge: {total} people again")


def is_on(toggle):
    """A toggle button's state: GTK 4.8 says PRESSED, later ones CHECKED."""
    states = toggle.getState()
    return states.contains(pyatspi.STATE_PRESSED) or states.contains(pyatspi.STATE_CHECKED)


def find_label(root, part):
    for acc in walk(root):
        if acc.getRole() == pyatspi.ROLE_LABEL and part in acc.name:
            return acc
    return None


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) != 3:
        log(__doc__)
        sys.exit(2)
    sys.exit(inner(args) if os.environ.get("LK_A11Y_INNER") else outer(args))
