#!/usr/bin/python3
"""Copies each experiment's headline table from its report into docs/experiments.md.

docs/experiments.md marks the place of each table with
    <!-- experiment:NAME -->
    <!-- /experiment -->
and the table comes from experiments/results/NAME/report.md: the first
Markdown table after its first "## " scenario heading, with the published
comparison line before it; NAME:detail, the second table (where the time
went); NAME:all, every scenario's first table under its name; NAME:details,
every scenario's second; NAME:event,
the table after the "Around clock" line. (The tables lived in README.md
before the docs moved to docs/; the script kept its name.)
Usage: scripts/readme-experiments.py
"""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def tables(lines, start):
    """The Markdown tables after line `start` up to the next heading."""
    found, current = [], None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            current = current if current is not None else []
            current.append(line)
        elif current is not None:
            found.append(current)
            current = None
    if current is not None:
        found.append(current)
    return found


def headline(name):
    name, _, part = name.partition(":")
    path = os.path.join(root, "experiments", "results", name, "report.md")
    lines = open(path).read().split("\n")
    if part == "event":
        start = next(i for i, l in enumerate(lines) if l.startswith("Around clock"))
        return "\n".join(tables(lines, start)[0])
    scenarios = [i for i, l in enumerate(lines)
                 if l.startswith("## ") and l != "## Setup"]
    if part == "detail":
        return "\n".join(tables(lines, scenarios[0])[1])
    out = []
    if part == "details":
        for start in scenarios:
            out += ["**" + lines[start][3:] + "**", ""]
            out += tables(lines, start)[1] + [""]
        return "\n".join(out).rstrip()
    for start in scenarios if part == "all" else scenarios[:1]:
        if part == "all":
            out += ["**" + lines[start][3:] + "**", ""]
        published = [l for l in lines[start:start + 12]
                     if l.startswith("**Published")]
        if published and part != "all":
            out += [published[0], ""]
        out += tables(lines, start)[0] + [""]
    return "\n".join(out).rstrip()


doc_path = os.path.join(root, "docs", "experiments.md")
doc = open(doc_path).read()
pattern = re.compile(r"(<!-- experiment:([\w.:-]+) -->\n).*?(<!-- /experiment -->)",
                     re.S)
updated = pattern.sub(lambda m: m.group(1) + headline(m.group(2)) + "\n" +
                      m.group(3), doc)
if updated == doc and not pattern.search(doc):
    sys.exit("no <!-- experiment:NAME --> markers in docs/experiments.md")
open(doc_path, "w").write(updated)
