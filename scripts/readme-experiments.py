#!/usr/bin/python3
"""Copies each experiment's headline table from its report into README.md.

README.md marks the place of each table with
    <!-- experiment:NAME -->
    <!-- /experiment -->
and the table comes from experiments/results/NAME/report.md: the first
Markdown table after its first "## " scenario heading, with the published
comparison line before it; or, for <!-- experiment:NAME:event -->, the table
after the "Around clock" line. Usage: scripts/readme-experiments.py
"""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def headline(name):
    part = None
    if name.endswith(":event"):
        name, part = name[:-len(":event")], "event"
    path = os.path.join(root, "experiments", "results", name, "report.md")
    lines = open(path).read().split("\n")
    marker = "Around clock" if part == "event" else "## "
    start = next(i for i, l in enumerate(lines) if l.startswith(marker))
    out, in_table = [], False
    for line in lines[start + 1:]:
        if line.startswith("**Published") and part is None:
            out += [line, ""]
        elif line.startswith("|"):
            in_table = True
            out.append(line)
        elif in_table:
            break
    return "\n".join(out)


readme_path = os.path.join(root, "README.md")
readme = open(readme_path).read()
pattern = re.compile(r"(<!-- experiment:([\w.:-]+) -->\n).*?(<!-- /experiment -->)",
                     re.S)
updated = pattern.sub(lambda m: m.group(1) + headline(m.group(2)) + "\n" +
                      m.group(3), readme)
if updated == readme and not pattern.search(readme):
    sys.exit("no <!-- experiment:NAME --> markers in README.md")
open(readme_path, "w").write(updated)
