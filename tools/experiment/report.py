#!/usr/bin/python3
"""Plots of an experiment report, and the report as one HTML page.

Run by `lockstep-experiment report DIR` (installed next to it as
lockstep-report.py) after it wrote DIR/report.md and DIR/report/report.json.
Reads every recorded run's eval.jsonl and metrics.jsonl, draws the PNGs that
report.json lists, and writes DIR/report.html: report.md with the plots and
CSV files embedded, so the page opens in a browser with no server.
Needs Debian's python3-matplotlib and python3-numpy.
"""

import atexit
import functools
import json
import os
import platform
import shutil
import sys
import tempfile
import warnings


def give_matplotlib_a_writable_dir():
    """matplotlib keeps its font cache in ~/.config and ~/.cache (XDG) and
    warns on stderr when it cannot write there (a read-only home): give it
    a temporary directory of ours, removed at exit."""
    if os.environ.get("MPLCONFIGDIR"):
        return
    for env, default in (("XDG_CONFIG_HOME", "~/.config"),
                         ("XDG_CACHE_HOME", "~/.cache")):
        path = os.path.join(os.environ.get(env) or os.path.expanduser(default),
                            "matplotlib")
        try:
            os.makedirs(path, exist_ok=True)
            if os.access(path, os.W_OK):
                continue
        except OSError:
            pass
        path = tempfile.mkdtemp(prefix="lockstep-report-matplotlib-")
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        os.environ["MPLCONFIGDIR"] = path
        return


give_matplotlib_a_writable_dir()
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# The page's half, beside this script (its name where it is installed).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lockstep_report_html as report_html  # noqa: E402


def read_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    except FileNotFoundError:
        pass
    return rows


def colors(n):
    cmap = plt.get_cmap("tab10")
    return [cmap(i % 10) for i in range(n)]


@functools.lru_cache(maxsize=None)
def font_charmap():
    """The code points the plots' font has glyphs for."""
    from matplotlib import font_manager, ft2font
    path = font_manager.findfont(font_manager.FontProperties())
    return ft2font.FT2Font(path).get_charmap()


def drawable(text):
    """`text` as the plots' font can draw it: a character it has no glyph
    for becomes '?' (matplotlib would warn for each), and '$' stays a dollar
    sign instead of starting mathtext."""
    charmap = font_charmap()
    text = "".join(c if c.isspace() or ord(c) in charmap else "?"
                   for c in text)
    return text.replace("$", r"\$")


def legend(ax, **kwargs):
    """A legend of what the plot shows; none when it shows nothing
    labelled (matplotlib would warn)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, **kwargs)


def say_no_data(ax):
    """An empty plot says why it is empty."""
    ax.text(0.5, 0.5, "no finished run left data to plot",
            ha="center", va="center", transform=ax.transAxes)


def spread_on_grid(series, points=300):
    """series: [(x array, y array)] -> grid, median, min, max (NaN outside)."""
    ends = [x[-1] for x, _ in series if len(x)]
    if not ends:
        return None
    grid = np.linspace(0, max(ends), points)
    ys = []
    for x, y in series:
        if len(x) == 0:
            continue
        v = np.interp(grid, x, y, left=np.nan, right=np.nan)
        ys.append(v)
    stack = np.vstack(ys)
    counts = np.sum(~np.isnan(stack), axis=0)
    # Grid points no run reached are all-NaN columns: NaN, without warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        med = np.nanmedian(stack, axis=0)
        lo = np.nanmin(stack, axis=0)
        hi = np.nanmax(stack, axis=0)
    med[counts == 0] = np.nan
    return grid, med, lo, hi


def plot_accuracy(scenario, key, xlabel, path):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    drawn = 0
    for color, policy in zip(colors(len(scenario["policies"])),
                             scenario["policies"]):
        series = []
        for run in policy["runs"]:
            ev = read_jsonl(os.path.join(run["dir"], "eval.jsonl"))
            if not ev:
                continue
            # Runs of older builds have no training time (train_s).
            x = np.array([0.0] + [e.get(key, e.get("wall_s")) for e in ev],
                         dtype=float)
            y = np.array([np.nan] + [e["test_accuracy"] for e in ev], dtype=float)
            series.append((x[1:], y[1:]))
        s = spread_on_grid(series)
        if s is None:
            continue
        grid, med, lo, hi = s
        drawn += 1
        ax.plot(grid, med, color=color, label=policy["label"], linewidth=1.6)
        if len(series) > 1:
            ax.fill_between(grid, lo, hi, color=color, alpha=0.18, linewidth=0)
    main = scenario.get("target_accuracy", 0)
    for target in scenario.get("targets") or ([main] if main else []):
        main_line = target == main
        ax.axhline(target, color="black", linestyle="--" if main_line else ":",
                   linewidth=0.8 if main_line else 0.6,
                   label=("target %.3g" if main_line else "%.3g") % target)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("test accuracy")
    ax.set_title(scenario["name"] + ": test accuracy vs " + xlabel.split(" (")[0])
    ax.grid(alpha=0.3)
    if not drawn:
        say_no_data(ax)
    legend(ax, fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def worker_series(run_dir, field):
    """{worker: (clocks, values)} from metrics.jsonl; field is a function."""
    out = {}
    for m in read_jsonl(os.path.join(run_dir, "metrics.jsonl")):
        c, v = out.setdefault(m["worker"], ([], []))
        c.append(m["clock"])
        v.append(field(m))
    return {w: (np.array(c), np.array(v)) for w, (c, v) in sorted(out.items())}


def policy_grid(scenario, select, draw, title, ylabel, path):
    policies = [p for p in scenario["policies"] if p["runs"] and select(p)]
    fig_h = 2.6
    if not policies:
        fig, ax = plt.subplots(figsize=(8, 2))
        ax.text(0.5, 0.5, "no policy changed any worker's batch size",
                ha="center", va="center")
        ax.set_axis_off()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return
    cols = 2 if len(policies) > 1 else 1
    rows = (len(policies) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(8 if cols == 2 else 7,
                                                  fig_h * rows + 0.6),
                             squeeze=False, sharex=True)
    for ax, policy in zip(axes.flat, policies):
        draw(ax, policy["runs"][0]["dir"])
        if scenario.get("event_clock"):
            ax.axvline(scenario["event_clock"], color="black",
                       linestyle=":", linewidth=0.9)
        ax.set_title(policy["label"], fontsize=9)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(policies):]:
        ax.set_axis_off()
    for ax in axes[-1]:
        ax.set_xlabel("clock", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if 0 < len(labels) <= 8:
        fig.legend(handles, labels, loc="upper right", fontsize=7, ncol=4)
    elif labels:
        # A legend of every worker would cover the panels: say how many.
        title += " (%d workers, one line each)" % len(labels)
    fig.suptitle(scenario["name"] + ": " + title, fontsize=10, x=0.02,
                 ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def batches_vary(policy):
    series = worker_series(policy["runs"][0]["dir"], lambda m: m["batch"])
    return any(len(set(v.tolist())) > 1 for _, v in series.values())


def draw_batches(ax, run_dir):
    series = worker_series(run_dir, lambda m: m["batch"])
    for color, (w, (c, v)) in zip(colors(len(series)), series.items()):
        ax.step(c, v, where="post", color=color, linewidth=1,
                label="worker %d" % w)


def draw_clock_times(ax, run_dir):
    series = worker_series(
        run_dir, lambda m: (m["compute_s"] + m["push_s"] + m["pull_s"]) * 1000)
    for color, (w, (c, v)) in zip(colors(len(series)), series.items()):
        ax.plot(c, v, color=color, linewidth=0.7, label="worker %d" % w)


def idle_shares(run_dir):
    wait, total = {}, {}
    for m in read_jsonl(os.path.join(run_dir, "metrics.jsonl")):
        w = m["worker"]
        wait[w] = wait.get(w, 0) + m["wait_s"]
        total[w] = total.get(w, 0) + (m["compute_s"] + m["push_s"] +
                                      m["pull_s"] + m["wait_s"])
    return {w: wait[w] / total[w] for w in wait if total[w] > 0}


def plot_idle(scenario, path):
    policies = [p for p in scenario["policies"] if p["runs"]]
    shares = []
    workers = set()
    for p in policies:
        per_run = [idle_shares(r["dir"]) for r in p["runs"]]
        ws = sorted(set().union(*per_run)) if per_run else []
        workers.update(ws)
        shares.append({w: float(np.median([r[w] for r in per_run if w in r]))
                       for w in ws})
    workers = sorted(workers)
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(workers))
    x = np.arange(len(policies))
    for i, (color, w) in enumerate(zip(colors(len(workers)), workers)):
        ax.bar(x + (i - (len(workers) - 1) / 2) * width,
               [100 * s.get(w, np.nan) for s in shares], width, color=color,
               label="worker %d" % w)
    ax.set_xticks(x)
    ax.set_xticklabels([p["label"] for p in policies], fontsize=8,
                       rotation=15)
    ax.set_ylabel("idle share of the worker's time (%)")
    title = scenario["name"] + ": idle share per worker"
    ax.grid(axis="y", alpha=0.3)
    if not workers:
        say_no_data(ax)
    elif len(workers) <= 8:
        legend(ax, fontsize=7, ncol=4)
    else:
        title += " (bars in rank order, 0 to %d)" % workers[-1]
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw(scenario, plot, out_dir):
    path = os.path.join(out_dir, plot["file"])
    kind = plot["kind"]
    if kind == "accuracy-time":
        plot_accuracy(scenario, "train_s", "training time (s)", path)
    elif kind == "accuracy-clock":
        plot_accuracy(scenario, "clock", "clock", path)
    elif kind == "batches":
        policy_grid(scenario, batches_vary, draw_batches,
                    "batch size per worker", "samples", path)
    elif kind == "clock-times":
        policy_grid(scenario, lambda p: True, draw_clock_times,
                    "time per clock, compute + push + pull", "ms", path)
    elif kind == "idle":
        plot_idle(scenario, path)
    else:
        raise ValueError("unknown plot kind " + kind)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: lockstep-report.py DIR")
    out_dir = sys.argv[1]
    with open(os.path.join(out_dir, "report", "report.json")) as f:
        report = json.load(f)
    for scenario in report["scenarios"]:
        # Labels are the spec's: any text. The page keeps them as written.
        for policy in scenario["policies"]:
            policy["label"] = drawable(policy["label"])
        for plot in scenario["plots"]:
            draw(scenario, plot, out_dir)
    with open(os.path.join(out_dir, "report.md")) as f:
        md = f.read()
    md += ("\nPlots: Python %s, matplotlib %s, numpy %s.\n" %
           (platform.python_version(), matplotlib.__version__,
            np.__version__))
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(md)
    tmp = os.path.join(out_dir, "report.html.tmp")
    with open(tmp, "w") as f:
        f.write(report_html.page(report["name"], md, out_dir))
    os.replace(tmp, os.path.join(out_dir, "report.html"))


if __name__ == "__main__":
    main()
