#!/usr/bin/env python3
"""Runs the commands README.md and docs/ give, as written, so a doc that
drifts from the tree fails a test.

Every fenced block declares what it is: ```sh (commands: run), ```text
(output, a listing), or the file type of a file's content (toml, python,
yaml, json: not run). A ```sh block that cannot run here - it needs a
cluster, a GPU, a registry, several machines, or hours - is preceded by
the line <!-- not run: REASON --> naming where it is covered instead.

The blocks run in a scratch folder that looks like the repository to them
(scripts/, python/, experiments/ and docs/ linked, deploy/ copied, build/
the build tree given) with HOME inside it; docs/deployment.md's install
block runs first, so bare names (lockstep-keys) are the installed
layout's, as the docs tell a user to set up. The blocks of one file run in
order in one shell (a later block may use what an earlier one made), each
file in a fresh one.

  check-doc-commands.py SOURCE_DIR BUILD_DIR [--list]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)\s*$")
NOT_RUN = re.compile(r"^<!-- not run: (.+?) -->$")
KINDS = {"sh", "text", "toml", "python", "yaml", "json"}
# The install block comes first; then the README; then the rest.
FIRST = ["docs/deployment.md", "README.md"]
FILE_TIMEOUT_S = 300


def blocks(path):
    """(line, kind, reason, text) of every fenced block of `path`;
    problems as a list of strings."""
    lines = open(path).read().split("\n")
    found, problems = [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        kind = m.group(1)
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            problems.append(f"{path}:{i + 1}: a fence that never closes")
            break
        reason = None
        if i > 0:
            marked = NOT_RUN.match(lines[i - 1].strip())
            reason = marked.group(1).strip() if marked else None
        if kind not in KINDS:
            problems.append(
                f"{path}:{i + 1}: a block of kind '{kind}': say sh (a "
                f"command to run), text (output) or its file type")
        elif reason is not None and kind != "sh":
            problems.append(f"{path}:{i + 1}: 'not run' on a {kind} block")
        found.append((i + 1, kind, reason, "\n".join(lines[i + 1:end])))
        i = end + 1
    return found, problems


def scratch(source, build):
    """A folder that looks like the repository to the docs' commands."""
    root = tempfile.mkdtemp(prefix="lockstep-doc-commands.")
    for name in ["scripts", "python", "experiments", "docs", "tests",
                 "README.md"]:
        os.symlink(os.path.join(source, name), os.path.join(root, name))
    # Copied: a block may write an overlay of its own into deploy/.
    shutil.copytree(os.path.join(source, "deploy"), os.path.join(root, "deploy"),
                    ignore=shutil.ignore_patterns("node_modules", "local"))
    os.symlink(os.path.abspath(build), os.path.join(root, "build"))
    os.mkdir(os.path.join(root, "home"))
    return root


def run_file(root, path, runnable):
    """Runs the file's sh blocks in order in one bash; None or a failure."""
    script = ["set -euo pipefail"]
    for line, _, _, text in runnable:
        script.append(f"echo '@@ {path}:{line}' >&2")
        script.append(text)
    env = dict(os.environ, HOME=os.path.join(root, "home"),
               PATH=os.path.join(root, "home/lockstep/bin") + ":" +
               os.environ["PATH"])
    try:
        done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=root,
                              env=env, capture_output=True, text=True,
                              timeout=FILE_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return f"{path}: not done within {FILE_TIMEOUT_S} s\n{e.stderr or ''}"
    if done.returncode == 0:
        return None
    where = re.findall(r"^@@ (\S+)$", done.stderr, re.M)
    block = where[-1] if where else path
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-25:])
    return f"{block}: the block failed (exit {done.returncode}):\n{tail}"


def main():
    source, build = os.path.abspath(sys.argv[1]), sys.argv[2]
    docs = ["docs/" + f for f in sorted(os.listdir(os.path.join(source, "docs")))
            if f.endswith(".md")]
    order = FIRST + [d for d in docs if d not in FIRST]
    problems, plan = [], []
    for path in order:
        found, bad = blocks(os.path.join(source, path))
        problems += bad
        plan.append((path, found))
    if problems:
        print("\n".join(problems))
        return 1
    if "--list" in sys.argv:
        for path, found in plan:
            for line, kind, reason, _ in found:
                what = "run" if kind == "sh" and reason is None else (
                    f"not run: {reason}" if kind == "sh" else kind)
                print(f"{path}:{line}: {what}")
        return 0
    root = scratch(source, build)
    failures, ran, skipped = [], 0, 0
    try:
        for path, found in plan:
            runnable = [b for b in found if b[1] == "sh" and b[2] is None]
            skipped += sum(1 for b in found if b[1] == "sh" and b[2] is not None)
            if not runnable:
                continue
            ran += len(runnable)
            failure = run_file(root, path, runnable)
            if failure:
                failures.append(failure)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if failures:
        print("\n\n".join(failures))
        return 1
    print(f"PASS: {ran} command blocks ran as written; {skipped} marked not "
          f"run, each naming where it is covered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
