#!/usr/bin/python3
"""The data plane's security, measured (issue 26): what `auth` and `aead`
cost against the same job's plaintext direct transport, in one run.

  sudo bench/security_bench.py [--build build] [--reps 5] [--small-reps 15]
                               [--out FILE]

1. R_cipher: AES-256-GCM on one core, `openssl speed -evp aes-256-gcm`
   at the data plane's record size (256 KiB), sealing and opening.
2. Loopback: `lockstep-bench pushpull` rows for tcp, tcp+auth and tcp+aead
   (one server, one worker, one op in flight, 4 KiB and 64 MiB, pull and
   push), the three stacks in one bench run per repeat and their order
   rotated between repeats, so each ratio compares neighbours in time. A
   4 KiB row's p50 moves by +-20% between server sets on 2 shared cores
   (where the kernel puts the server's threads beside the client's), so
   4 KiB has more repeats (--small-reps) than 64 MiB (--reps).
   auth: p50 against plaintext. aead at 64 MiB: GB/s against the ideal of
   a transport that first moves the bytes and then ciphers them,
   1 / (1/R_tcp + 1/R_cipher), R_tcp the plaintext row of the same repeat.
3. A 5 Gbit/s link: the servers in one network namespace, the bench (the
   workers) in another, joined by a veth pair shaped by tc tbf to 5 Gbit/s
   both ways; 64 MiB aead against plaintext p50. Needs root (skipped
   without, or with --skip-link).

Each ratio is the median over the repeats; every repeat's ratio is
printed. The report goes to stdout and, with --out, to that file.
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

RECORD_BYTES = 256 << 10
LINK_RATE = "5gbit"


def cipher_rate(decrypt):
    """Bytes/s of AES-256-GCM at the record size on one core."""
    cmd = ["openssl", "speed", "-evp", "aes-256-gcm", "-bytes",
           str(RECORD_BYTES), "-seconds", "3"]
    if decrypt:
        cmd.insert(2, "-decrypt")
    out = subprocess.run(cmd, check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if line.startswith("AES-256-GCM"):
            return float(line.split()[-1].rstrip("k")) * 1000
    raise RuntimeError("no AES-256-GCM line in openssl speed's output:\n" +
                       out)


def pushpull(bench, transports, sizes, row_seconds, extra=(), prefix=()):
    """{(op, bytes, transport): row} of one lockstep-bench pushpull run."""
    cmd = list(prefix) + [
        bench, "pushpull", "--sizes", sizes, "--servers", "1", "--workers",
        "1", "--outstanding", "1", "--transport", ",".join(transports),
        "--mode", "dense", "--row-seconds", str(row_seconds),
        "--no-baselines", "--json"] + list(extra)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    rows = {}
    for line in run.stdout.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if row.get("kind") != "ps":
            continue
        if row["error"] or row["wrong"]:
            raise RuntimeError("row failed: " + line)
        rows[(row["op"], row["bytes"], row["transport"])] = row
    if run.returncode != 0 or not rows:
        raise RuntimeError("lockstep-bench failed (%d):\n%s%s" %
                           (run.returncode, run.stdout[-3000:],
                            run.stderr[-3000:]))
    return rows


def rotated(items, rep):
    k = rep % len(items)
    return items[k:] + items[:k]


def loopback(bench, reps, small_reps, row_seconds, r_cipher, say):
    stacks = ["tcp", "tcp+auth", "tcp+aead"]
    ratios = {}  # name -> per-repeat ratios

    def add(name, value):
        ratios.setdefault(name, []).append(value)

    for size, label, repeats in ((4096, "4K", small_reps),
                                 (64 << 20, "64M", reps)):
        for rep in range(repeats):
            rows = pushpull(bench, rotated(stacks, rep), label, row_seconds)
            for op in ("pull", "push"):
                plain = rows[(op, size, "tcp")]
                auth = rows[(op, size, "tcp+auth")]
                aead = rows[(op, size, "tcp+aead")]
                add("auth/plain p50 %s %s" % (label, op),
                    auth["p50_us"] / plain["p50_us"])
                add("aead/plain p50 %s %s" % (label, op),
                    aead["p50_us"] / plain["p50_us"])
                if size != 64 << 20:
                    continue
                r_tcp = plain["gbps"] * 1e9
                ideal = 1 / (1 / r_tcp + 1 / r_cipher)
                add("aead GB/s / ideal 64M %s" % op,
                    aead["gbps"] * 1e9 / ideal)
                say("  repeat %d, 64M %s: plain %.3f GB/s, auth %.3f, "
                    "aead %.3f, ideal aead %.3f" %
                    (rep + 1, op, plain["gbps"], auth["gbps"], aead["gbps"],
                     ideal / 1e9))
    return ratios


class Link:
    """Two network namespaces joined by a veth pair shaped to LINK_RATE."""

    def __init__(self):
        tag = str(os.getpid())
        self.bench_ns, self.server_ns = "lsb-w-" + tag, "lsb-s-" + tag
        self.bench_ip, self.server_ip = "10.203.0.1", "10.203.0.2"
        self.made = []

    def sh(self, *args):
        subprocess.run(list(args), check=True, capture_output=True)

    def __enter__(self):
        for ns in (self.bench_ns, self.server_ns):
            self.sh("ip", "netns", "add", ns)
            self.made.append(ns)
            self.sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.sh("ip", "link", "add", "lsbw" + str(os.getpid() % 100000),
                "netns", self.bench_ns, "type", "veth", "peer", "name",
                "lsbs" + str(os.getpid() % 100000), "netns", self.server_ns)
        for ns, dev, ip in (
                (self.bench_ns, "lsbw", self.bench_ip),
                (self.server_ns, "lsbs", self.server_ip)):
            dev += str(os.getpid() % 100000)
            self.sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
            self.sh("ip", "-n", ns, "link", "set", dev, "up")
            self.sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev",
                    dev, "root", "tbf", "rate", LINK_RATE, "burst", "4mb",
                    "latency", "20ms")
        return self

    def __exit__(self, *exc):
        for ns in self.made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def shaped_link(bench, server, reps, row_seconds, say):
    ratios = {}
    with Link() as link, tempfile.TemporaryDirectory() as tmp:
        wrapper = os.path.join(tmp, "server-in-namespace")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n" %
                    (link.server_ns, server))
        os.chmod(wrapper, 0o755)
        extra = ["--coordinator-host", link.bench_ip, "--server-host",
                 link.server_ip, "--server-binary", wrapper]
        prefix = ["ip", "netns", "exec", link.bench_ns]
        for rep in range(reps):
            rows = pushpull(bench, rotated(["tcp", "tcp+aead"], rep), "64M",
                            row_seconds, extra, prefix)
            for op in ("pull", "push"):
                plain = rows[(op, 64 << 20, "tcp")]
                aead = rows[(op, 64 << 20, "tcp+aead")]
                ratios.setdefault("aead/plain p50 64M %s, %s link" %
                                  (op, LINK_RATE), []).append(
                                      aead["p50_us"] / plain["p50_us"])
                say("  repeat %d, 64M %s over the link: plain %.3f GB/s, "
                    "aead %.3f" % (rep + 1, op, plain["gbps"], aead["gbps"]))
    return ratios


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--small-reps", type=int, default=15)
    ap.add_argument("--row-seconds", type=float, default=2.0)
    ap.add_argument("--skip-link", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    bench = os.path.abspath(os.path.join(args.build, "bin", "lockstep-bench"))
    server = os.path.abspath(os.path.join(args.build, "bin",
                                          "lockstep-server"))
    for binary in (bench, server):
        if not os.access(binary, os.X_OK):
            sys.exit("no %s: ninja -C %s lockstep-bench lockstep-server" %
                     (binary, args.build))
    if shutil.which("openssl") is None:
        sys.exit("openssl is needed for R_cipher (apt-get install openssl)")
    lines = []

    def say(text):
        print(text, flush=True)
        lines.append(text)

    say("# bench/security_bench.py, %s, %d CPUs, %d repeats (4 KiB: %d), "
        "rows of %.1f s" % (datetime.date.today(), os.cpu_count(), args.reps,
                            args.small_reps, args.row_seconds))
    r_seal, r_open = cipher_rate(False), cipher_rate(True)
    r_cipher = min(r_seal, r_open)
    say("R_cipher (openssl speed -evp aes-256-gcm, %d KiB records, one "
        "core): seal %.2f GB/s, open %.2f GB/s; the ideal uses the slower, "
        "%.2f GB/s" % (RECORD_BYTES >> 10, r_seal / 1e9, r_open / 1e9,
                       r_cipher / 1e9))
    say("Loopback (TCP), 1 server, 1 worker, 1 op in flight:")
    ratios = loopback(bench, args.reps, args.small_reps, args.row_seconds,
                      r_cipher, say)
    if args.skip_link or os.geteuid() != 0:
        say("The %s link: skipped (%s)" %
            (LINK_RATE, "--skip-link" if args.skip_link else "needs root"))
    else:
        say("A %s veth link between two network namespaces (tc tbf):" %
            LINK_RATE)
        ratios.update(shaped_link(bench, server, args.reps,
                                  args.row_seconds, say))
    say("Ratios (median of the repeats; each repeat's in brackets):")
    for name, values in ratios.items():
        say("  %-40s %.2f  [%s]" % (name, statistics.median(values),
                                     " ".join("%.2f" % v for v in values)))
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
