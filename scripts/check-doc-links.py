#!/usr/bin/python3
"""Checks every relative link in README.md and docs/*.md.

A link [text](PATH), [text](PATH#ANCHOR), [text](#ANCHOR) or an image
![alt](PATH) must name a file or folder inside the repository, and an
anchor must be a heading of the page it points to (GitHub's rule: lower
case, punctuation other than '-' and '_' dropped, spaces to '-'). Links
with a scheme (https:, mailto:) are not checked; links inside code blocks
and code spans are not links. Prints each broken link as FILE:LINE and
exits 1 if there is one.
Usage: scripts/check-doc-links.py [FILE.md...]
"""
import glob
import os
import re
import sys

root = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(path):
    """The file's text with fenced code blocks blanked (lines kept)."""
    lines, fenced = [], False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            line = "\n"
        lines.append("\n" if fenced else line)
    return "".join(lines)


def anchors(path):
    """The anchors of the headings of a Markdown file."""
    found = set()
    for line in prose(path).split("\n"):
        heading = re.match(r"#+\s+(.*?)\s*$", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower())
            found.add(slug.replace(" ", "-"))
    return found


def blank(match):
    """A code span's text as spaces, its line breaks kept."""
    return re.sub(r"[^\n]", " ", match.group(0))


def broken(path):
    """(line number, target, why) for each broken link of `path`."""
    text = re.sub(r"`[^`]*`", blank, prose(path))  # code spans are no links
    for match in link.finditer(text):
        target = match.group(1)
        if re.match(r"[a-z]+:", target):
            continue
        number = text.count("\n", 0, match.start(1)) + 1
        file_part, _, anchor = target.partition("#")
        dest = (os.path.realpath(os.path.join(os.path.dirname(path), file_part))
                if file_part else path)
        if os.path.commonpath([dest, root]) != root:
            yield number, target, "outside the repository"
        elif not os.path.exists(dest):
            yield number, target, "no such file"
        elif anchor and (not dest.endswith(".md") or
                         anchor not in anchors(dest)):
            yield number, target, "no such heading"


def main():
    files = sys.argv[1:] or ([os.path.join(root, "README.md")] +
                             sorted(glob.glob(os.path.join(root, "docs",
                                                           "*.md"))))
    bad = 0
    for path in files:
        path = os.path.realpath(path)
        for number, target, why in broken(path):
            print(f"{os.path.relpath(path, root)}:{number}: {target}: {why}")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
