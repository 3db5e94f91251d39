#!/usr/bin/python3
"""Checks that what README.md and docs/*.md name exists in the tree.

- A path: any word that starts with one of the repository's top-level
  folders and a slash (server/guard/push_guard.h, tools/launch/) must name
  a file or folder. Placeholders (a word with X_, braces, * or <...>, or
  an upper-case part: worker/N) and what a page's own commands create
  (mkdir -p PATH) are not checked.
- A class: a CamelCase word in a code span that names a C++ type in the
  text of the docs as `Name` must be declared (class, struct, enum or
  using) in a source file (a name with a one-letter part, CreateXOptimizer,
  is a placeholder); one word that is no type (a metric label, a
  wire enum) passes when any source file holds it.
- A flag: a --flag in a code span must appear in a source, script,
  schema or deploy file, as "flag" (a parser's table) or --flag; the few
  flags of other tools that the pages name are listed in OTHER_TOOLS.
Prints each name that does not exist as FILE:LINE and exits 1 if there is
one.
Usage: scripts/check-doc-names.py [FILE.md...]
"""
import glob
import os
import re
import subprocess
import sys

root = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
# Flags the pages give to other programs, and whose they are.
OTHER_TOOLS = {"runtime": "podman", "ulimit": "podman",
               "variant": "mmdebstrap"}


def tracked():
    out = subprocess.check_output(["git", "ls-files"], cwd=root, text=True)
    return [f for f in out.split("\n") if f]


def main(argv):
    files = tracked()
    tops = sorted({f.split("/")[0] for f in files if "/" in f} - {"docs"})
    paths = set(files)
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            paths.add("/".join(parts[:i]))
    code = []
    for f in files:
        if re.search(r"\.(h|cc|cu|cuh|py|sh|fbs|cmake|toml|yaml|json)$", f) \
                or f.endswith("CMakeLists.txt") \
                or f.split("/")[0] in ("scripts", "deploy"):
            try:
                code.append(open(os.path.join(root, f), encoding="utf-8",
                                 errors="replace").read())
            except (IsADirectoryError, FileNotFoundError):
                pass
    source = "\n".join(code)
    types = set(re.findall(
        r"\b(?:class|struct|enum(?:\s+class)?|using)\s+([A-Z]\w*)", source))
    path_word = re.compile(
        r"(?<![\w./-])((?:" + "|".join(map(re.escape, tops)) +
        r")/[\w./{},*<>-]*)")
    span = re.compile(r"`([^`\n]+)`")
    docs = argv or [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "*.md")))
    missing = []
    for doc in docs:
        text = open(doc, encoding="utf-8").read()
        made = re.findall(r"mkdir -p (\S+)", text)
        for number, line in enumerate(text.split("\n"), 1):
            for word in path_word.findall(line):
                word = word.rstrip(".,;:)")
                if re.search(r"X_|[{}*<>]|\.\.\.|(^|/)[A-Z]+(/|$)", word):
                    continue
                if any(word == m or word.startswith(m.rstrip("/") + "/")
                       for m in made):
                    continue
                if word.rstrip("/") not in paths:
                    missing.append((doc, number, "no such path", word))
            for text in span.findall(line):
                for flag in re.findall(r"(?<![\w-])--([a-z][\w-]*)", text):
                    if flag in OTHER_TOOLS:
                        continue
                    if not re.search(r'"' + re.escape(flag) + r'[",=]|--' +
                                     re.escape(flag) + r"\b", source):
                        missing.append((doc, number, "no such flag",
                                        "--" + flag))
                # A one-letter part is a placeholder (CreateXOptimizer).
                if re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+", text) \
                        and not re.search(r"[A-Z](?![a-z])", text):
                    if text not in types and not re.search(
                            r"\b" + text + r"\b", source):
                        missing.append((doc, number, "no such name", text))
    for doc, number, why, word in missing:
        print(f"{os.path.relpath(doc, root)}:{number}: {why}: {word}")
    if missing:
        return 1
    print(f"check-doc-names: every path, class and flag of {len(docs)} "
          "pages exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
