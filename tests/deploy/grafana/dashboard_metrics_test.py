"""deploy/grafana's dashboard reads metrics a live job publishes: a small
LB-BSP job of real processes (coordinator, 2 servers, 2 workers on
127.0.0.1, snapshot rounds on) is scraped at its /metrics while it trains,
and every metric a panel's query names must be there, selected by the
dashboard's job and instance variables. The scrape is a clean exposition
(`promtool check metrics`: every family with HELP and TYPE, no series
twice), every family it holds is listed in docs/operations.md, and the
honest job refused no connection.
  dashboard_metrics_test.py SOURCE_DIR BIN_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

src, bindir = sys.argv[1], sys.argv[2]
dashboard = json.load(open(os.path.join(src, "deploy/grafana/lockstep-dashboard.json")))
exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
variables = {v["name"] for v in dashboard["templating"]["list"]}
assert {"job", "instance"} <= variables, variables
for e in exprs:
    for m in re.finditer(r"lockstep_[a-z_]+(\{[^}]*\})?", e):
        assert m.group(1) and '$job' in m.group(1) and '$instance' in m.group(1), \
            f"{m.group(0)} in '{e}' is not selected by the job and instance variables"
wanted = set()
for e in exprs:
    for name in re.findall(r"lockstep_[a-z_]+", e):
        wanted.add(name)
assert len(wanted) >= 10, wanted

procs = []
work = tempfile.mkdtemp(prefix="lockstep-grafana.")
# The job's keys: every role started below finds its own file through the
# environment.
subprocess.run([os.path.join(bindir, "lockstep-keys"), "--out",
                os.path.join(work, "keys")], check=True, stdout=subprocess.DEVNULL)
os.environ["LOCKSTEP_KEYS"] = os.path.join(work, "keys")
try:
    coordinator = subprocess.Popen(
        [os.path.join(bindir, "lockstep-coordinator"), "--listen", "tcp://127.0.0.1:0",
         "--metrics-listen", "127.0.0.1:0", "--servers", "2", "--workers", "2",
         "--evaluators", "0", "--sync", "lbbsp", "--model", "softmax",
         "--data", "synthetic:samples=4000:test=400:dim=12:classes=3",
         "--clocks", "100000", "--eval-every", "20", "--heartbeat-ms", "100",
         "--snapshot-dir", os.path.join(work, "s"), "--snapshot-every-clocks", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    procs.append(coordinator)
    endpoint = url = None
    deadline = time.time() + 30
    while (endpoint is None or url is None) and time.time() < deadline:
        line = coordinator.stdout.readline()
        if line.startswith("@endpoint "):
            endpoint = line.split()[1]
        elif line.startswith("@metrics "):
            url = line.split()[1]
    assert endpoint and url, "the coordinator printed no endpoint or metrics URL"
    for rank in range(2):
        procs.append(subprocess.Popen(
            [os.path.join(bindir, "lockstep-server"), "--coordinator", endpoint,
             "--rank", str(rank), "--listen", "tcp://127.0.0.1:0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for rank in range(2):
        procs.append(subprocess.Popen(
            [os.path.join(bindir, "lockstep-worker"), "--coordinator", endpoint,
             "--rank", str(rank), "--hetero", "linear=0.002+0.00001"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    names, text = set(), ""
    deadline = time.time() + 90
    while time.time() < deadline:
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        names = {re.match(r"[a-z_]+", l).group(0) for l in text.splitlines()
                 if l and not l.startswith("#")}
        done = re.search(r'lockstep_snapshot_rounds_total\{result="complete"\} ([0-9.]+)', text)
        if wanted <= names and done and float(done.group(1)) >= 1:
            break
        time.sleep(0.5)
    missing = sorted(wanted - names)
    assert not missing, f"the dashboard queries metrics the job does not publish: {missing}\n{text[:2000]}"
    lint = subprocess.run(["promtool", "check", "metrics"], input=text,
                          capture_output=True, text=True)
    assert lint.returncode == 0 and not (lint.stdout + lint.stderr).strip(), \
        f"promtool check metrics: {lint.stdout}{lint.stderr}\n{text[:3000]}"
    families = {l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")}
    operations = open(os.path.join(src, "docs/operations.md")).read()
    undocumented = sorted(f for f in families if f not in operations)
    assert not undocumented, f"docs/operations.md does not list: {undocumented}"
    refused = re.search(r'lockstep_refused_connections_total\{plane="control"\} ([0-9.]+)', text)
    assert refused and float(refused.group(1)) == 0, \
        f"an honest job refused connections:\n{text[:3000]}"
    print(f"PASS: {len(exprs)} queries over {len(wanted)} metrics, all "
          f"published; {len(families)} families, promtool clean, documented")
finally:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()
