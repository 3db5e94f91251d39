#!/usr/bin/python3
"""Checks the include graph of the sources (not tests) against the layering.

- No include loop: no file reaches itself through the files it includes,
  and no top-level folder through the folders its files include. (Below
  the top, a registry beside an interface includes the backends in its
  sub-folders, which include the interface: the ladders say where that
  is not allowed.)
- The ladders: inside server/ and coordinator/, each sub-folder has a
  floor (LADDERS below); a file includes only files of its own folder or
  of a lower floor, never one above it or a sibling's on the same floor.
- The generated FlatBuffers headers are included only by their layer:
  lockstep_generated.h by common/wire/, snapshot_generated.h by
  snapshot_format/; the rest of the tree reads messages through them.
Prints each breach and exits 1 if there is one.
Usage: scripts/check-layers.py
"""
import os
import re
import subprocess
import sys

root = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
# Floors from the top down; a folder's own files are its top floor.
LADDERS = {
    "server": [["server"], ["server/replication"], ["server/shard"],
               ["server/snapshot", "server/guard"], ["server/model"],
               ["server/store"]],
    "coordinator": [["coordinator"], ["coordinator/faults"],
                    ["coordinator/enrollment"], ["coordinator/replicas"],
                    ["coordinator/clock", "coordinator/rounds"],
                    ["coordinator/state"]],
}
GENERATED = {
    "schemas/lockstep_generated.h": ("common/wire",),
    "schemas/snapshot_generated.h": ("snapshot_format",),
}
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    out = subprocess.check_output(["git", "ls-files", "*.h", "*.cc", "*.cu",
                                   "*.cuh"], cwd=root, text=True)
    return [f for f in out.split() if not f.startswith("tests/")]


def graph(files):
    """file -> the repository files (and generated headers) it includes."""
    known = set(files)
    edges = {}
    for f in files:
        text = open(os.path.join(root, f), encoding="utf-8").read()
        edges[f] = [i for i in include.findall(text)
                    if i in known or i in GENERATED]
    return edges


def loops(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1 or v in edges.get(v, ()):
                found.append(sorted(part))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def floor_of(path):
    """(ladder, floor) of a file's folder, or None outside the ladders."""
    folder = os.path.dirname(path)
    for top, floors in LADDERS.items():
        for number, names in enumerate(floors):
            if folder in names:
                return top, number
    return None


def main():
    edges = graph(sources())
    breaches = []
    for part in loops(edges):
        breaches.append("files include each other: " + " -> ".join(part))
    folders = {}
    for f, targets in edges.items():
        for t in targets:
            a, b = f.split("/")[0], t.split("/")[0]
            if a != b and t not in GENERATED:
                folders.setdefault(a, set()).add(b)
    for part in loops({k: sorted(v) for k, v in folders.items()}):
        breaches.append("top-level folders include each other: " +
                        ", ".join(part))
    for f, targets in sorted(edges.items()):
        here = floor_of(f)
        for t in targets:
            if t in GENERATED:
                if not any(os.path.dirname(f) == layer
                           for layer in GENERATED[t]):
                    breaches.append(f"{f} includes {t}, which only "
                                    f"{', '.join(GENERATED[t])}/ may include")
                continue
            there = floor_of(t)
            if here is None or there is None or here[0] != there[0]:
                continue
            same_folder = os.path.dirname(f) == os.path.dirname(t)
            if not same_folder and there[1] <= here[1]:
                where = "above it" if there[1] < here[1] else "beside it"
                breaches.append(f"{f} includes {t}, a floor {where} in "
                                f"{here[0]}/")
    for b in breaches:
        print("check-layers:", b)
    if breaches:
        return 1
    print(f"check-layers: {len(edges)} files, no include loop, every "
          f"ladder ({', '.join(LADDERS)}) kept, generated headers in "
          "their layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
