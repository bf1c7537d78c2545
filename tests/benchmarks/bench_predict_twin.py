#!/usr/bin/env python3
"""Cross-check (issue #43): predict's per-flow max-min rates against real Linux ECMP and TCP.

Run (root; Debian iproute2 and iperf3): python tests/benchmarks/bench_predict_twin.py
        [--folder inventories/pod-128] [--seconds 12] [--scale 5e-5]

A reduction of a rendered pod-128: its first two parameter leaves, every spine and every
leaf-spine cable between them as read by generator/predict/fabric.py from files/cabling.csv,
the ECMP widths of the switches' `maximum load-balancing`, and the NPU ports of the servers on
those leaves, each device a network namespace joined by veth pairs shaped to the cable's speed
x scale (200GE -> 10 Mbit/s at 5e-5). An NPU's link carries one flow: tc tbf. A leaf-spine
cable carries several: an htb per end with one class per flow (u32 on its TCP source port),
each guaranteed 1/(flows+1) of the rate and allowed to borrow all of it, so backlogged flows
share the cable evenly, max-min's rule per link (this kernel builds no fq, fq_codel or sfq:
`--fifo` keeps plain tbf FIFOs, where TCP's own sharing is far from even). Routes are static
ECMP routes (one nexthop per equal link, at most the switch's width) and every router hashes
on L4 (net.ipv4.fib_multipath_hash_policy=1). One iperf3 TCP flow per NPU of the first leaf to
the same NPU index on the second leaf, each with its own source port. The path each flow took
is read from nftables counters per flow and output port at the leaf and the spines (`ip route
get ... sport ... ipproto tcp` was seen to name other ports than the packets took), those
paths are handed to flows.max_min, and each flow's measured rate is held against its
prediction: the issue asks +/-15 % per flow; exit 1 when a flow is further off. Namespaces are
named predict-<WANKA_TWIN_INSTANCE>-*, and removed at the end (also on failure).

Measured here (kernel 6.18, 12 s, 32 flows, pod-128's first two leaves and four spines, load
average over 50): per-flow error median 3.1 %, worst 5.1 %, 32 of 32 within 15 %; all flows
together -2.5 % (TCP/IP headers: iperf3 counts payload). With --fifo (30 s): median 28-45 %,
4-9 of 32 within 15 %, all together -4.4 %.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator.predict import fabric, flows  # noqa: E402

# namespaces of this run only: predict-<WANKA_TWIN_INSTANCE>-<device>
PREFIX = f"predict-{os.environ.get('WANKA_TWIN_INSTANCE', 'bench')}-"


def sh(*args: str, ns: str | None = None, check: bool = True) -> str:
    if ns and args[0] == "ip":  # `ip -n`: one process instead of `ip netns exec ... ip`
        cmd = ["ip", "-n", ns, *args[1:]]
    else:
        cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    return subprocess.run(cmd, check=check, capture_output=True, text=True).stdout


def batch(tool: list[str], lines: list[str]) -> None:
    """Several `ip`/`tc` commands in one process (their -batch mode)."""
    subprocess.run([*tool, "-batch", "-"], input="\n".join(lines) + "\n", text=True,
                   check=True, capture_output=True)  # fmt: skip


class Lab:
    def __init__(self, scale: float, latency: int) -> None:
        self.scale = scale
        self.latency = latency
        self.names: list[str] = []
        self.pair = 0

    def ns(self, name: str) -> str:
        full = PREFIX + name
        sh("ip", "netns", "add", full)
        self.names.append(full)
        sh("ip", "-n", full, "link", "set", "lo", "up")
        sh("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.fib_multipath_hash_policy=1",
           ns=full)  # fmt: skip
        return full

    def link(self, a: str, b: str, gbytes: float, fair: int = 0) -> tuple[str, str, str, str]:
        """A veth pair a<->b on a /31, both ends shaped to gbytes x scale; (dev a, ip a, dev b,
        ip b). With `fair` flows, each end is an htb of one class per flow (TCP source port
        40000 + n, u32) at 1/fair of the rate that may borrow up to all of it: the backlogged
        flows share the link evenly (max-min's per-link rule), as no fq qdisc is built here."""
        i = self.pair
        self.pair += 1
        da, db = f"v{i}a", f"v{i}b"
        sh("ip", "link", "add", da, "netns", a, "type", "veth", "peer", "name", db, "netns", b)
        net = 10 << 24 | 200 << 16 | (2 * i) & 0xFFFF
        ipa = ".".join(str(net >> s & 255) for s in (24, 16, 8, 0))
        ipb = ".".join(str((net + 1) >> s & 255) for s in (24, 16, 8, 0))
        kbit = max(1, round(gbytes * 8e6 * self.scale))
        for ns, dev, ip in ((a, da, ipa), (b, db, ipb)):
            batch(["ip", "-n", ns], [f"addr add {ip}/31 dev {dev}", f"link set {dev} up"])
            if not fair:
                batch(["tc", "-n", ns], [f"qdisc add dev {dev} root tbf rate {kbit}kbit burst"
                                         f" 8kb latency {self.latency}ms"])  # fmt: skip
                continue
            share = max(1, kbit // (fair + 1))
            lines = [
                f"qdisc add dev {dev} root handle 1: htb default 2",
                f"class add dev {dev} parent 1: classid 1:1 htb rate {kbit}kbit ceil {kbit}kbit",
                f"class add dev {dev} parent 1:1 classid 1:2 htb rate {share}kbit ceil {kbit}kbit",
            ]
            for n in range(fair):
                lines += [
                    f"class add dev {dev} parent 1:1 classid 1:{n + 16:x} htb rate {share}kbit"
                    f" ceil {kbit}kbit",
                    f"qdisc add dev {dev} parent 1:{n + 16:x} pfifo limit 64",
                    f"filter add dev {dev} parent 1: protocol ip prio 1 u32 match ip sport"
                    f" {40000 + n} 0xffff flowid 1:{n + 16:x}",
                ]
            batch(["tc", "-n", ns], lines)
        return da, ipa, db, ipb

    def down(self) -> None:
        for name in self.names:
            sh("ip", "netns", "del", name, check=False)


def route(ns: str, prefix: str, hops: list[tuple[str, str]]) -> None:
    args = ["ip", "route", "replace", prefix]
    if len(hops) == 1:
        args += ["via", hops[0][1], "dev", hops[0][0]]
    else:
        for dev, via in hops:
            args += ["nexthop", "via", via, "dev", dev]
    sh(*args, ns=ns)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--folder", default=str(ROOT / "inventories" / "pod-128"))
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--scale", type=float, default=5e-5)
    ap.add_argument("--verbose", action="store_true", help="print each flow's path")
    ap.add_argument("--latency", type=int, default=10, help="tbf queue, ms (default 10)")
    ap.add_argument("--omit", type=int, default=5, help="seconds iperf3 leaves out first (all"
                    " clients started, slow start over; default 5)")  # fmt: skip
    ap.add_argument("--fifo", action="store_true", help="tbf FIFO between switches (no htb)")
    ap.add_argument("--keep", action="store_true", help="leave the namespaces (predict-*)")
    ap.add_argument("--quiet", action="store_true", help="the summary line only")
    args = ap.parse_args()
    fab = fabric.load(Path(args.folder))
    leaf_of = {ip: fab.switches[sw] for ip, (sw, _, _) in fab.nic.items()}
    leaves = sorted(set(leaf_of.values()))[:2]
    spines = sorted({fab.switches[v] for v, _ in fab.up[leaves[0]]})
    nflows = min(sum(leaf_of[ip] == leaf for ip in fab.nic) for leaf in leaves)  # one per NPU
    lab = Lab(args.scale, args.latency)
    t0 = time.perf_counter()
    try:
        sw = {name: lab.ns(name) for name in leaves + spines}
        ups: dict[tuple[str, str], list[tuple]] = {}  # (leaf, spine) -> veths, cabling order
        for leaf in leaves:
            for v, link in fab.up[leaf]:
                spine = fab.switches[v]
                if spine in spines:
                    ends = lab.link(
                        sw[leaf], sw[spine], fab.cap[link], fair=0 if args.fifo else nflows
                    )
                    ups.setdefault((leaf, spine), []).append((*ends, fab.cap[link]))
        npus: dict[str, tuple[str, str, str]] = {}  # device ip -> (ns, lab ip, leaf's dev)
        subnet = {leaf: f"10.{210 + k}.0.0/16" for k, leaf in enumerate(leaves)}
        count = dict.fromkeys(leaves, 0)
        for ip in sorted(fab.nic, key=lambda x: fab.host_of[x]):
            leaf = leaf_of[ip]
            if leaf not in leaves:
                continue
            host, index = fab.host_of[ip]
            ns = lab.ns(f"{host}-npu{index}")  # one namespace per NPU port: one route each
            da, ipa, db, ipb = lab.link(ns, sw[leaf], fab.cap[fab.nic[ip][1]])
            k, m = leaves.index(leaf), count[leaf]
            count[leaf] += 1
            lab_ip = f"10.{210 + k}.{m // 250}.{m % 250 + 1}"
            sh("ip", "addr", "add", f"{lab_ip}/32", "dev", da, ns=ns)
            sh("ip", "route", "add", subnet[leaves[1 - k]], "via", ipb, "dev", da, "src", lab_ip,
               ns=ns)  # fmt: skip
            sh("ip", "route", "add", f"{lab_ip}/32", "via", ipa, "dev", db, ns=sw[leaf])
            npus[ip] = (ns, lab_ip, db)
        for k, leaf in enumerate(leaves):
            other = subnet[leaves[1 - k]]
            hops = [(e[0], e[3]) for s in spines for e in ups[(leaf, s)]]
            route(sw[leaf], other, hops[: fab.ecmp[leaf]])
            for s in spines:
                links = [(e[2], e[1]) for e in ups[(leaf, s)]]
                route(sw[s], subnet[leaf], links[: fab.ecmp[s]])
        # one flow per NPU of leaf 0 to the same NPU index of a server on leaf 1
        src = [ip for ip in npus if leaf_of[ip] == leaves[0]]
        dst = [ip for ip in npus if leaf_of[ip] == leaves[1]]
        pairs = list(zip(src, dst, strict=False))
        # count each flow's packets per output port at the routers (nftables), to read the
        # path the kernel's hash really gave it (`ip route get` was seen to disagree)
        outs = {sw[leaves[0]]: [e[0] for s in spines for e in ups[(leaves[0], s)]]}
        for s in spines:
            outs[sw[s]] = [e[2] for e in ups[(leaves[1], s)]]
        for ns, devs in outs.items():
            rules = ["table inet predict {", " chain paths {",
                     "  type filter hook forward priority 0; policy accept;"]  # fmt: skip
            rules += [
                f'  oifname "{dev}" tcp sport {40000 + n} counter'
                for dev in devs
                for n in range(len(pairs))
            ]
            subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], check=True,
                           input="\n".join([*rules, " }", "}", ""]), text=True)  # fmt: skip
        servers, clients = [], []
        for n, (_, b) in enumerate(pairs):
            ns_b, ip_b, _ = npus[b]
            cmd = ["iperf3", "-s", "-1", "-p", str(5201 + n), "-B", ip_b]
            servers.append(subprocess.Popen(["ip", "netns", "exec", ns_b, *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
        time.sleep(1)
        t1 = time.perf_counter()
        for n, (a, b) in enumerate(pairs):
            ns_a, ip_a, _ = npus[a]
            cmd = ["iperf3", "-c", npus[b][1], "-p", str(5201 + n), "-B", ip_a, "--cport",
                   str(40000 + n), "-t", str(args.seconds), "-O", str(args.omit), "-J"]  # fmt: skip
            clients.append(subprocess.Popen(["ip", "netns", "exec", ns_a, *cmd],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))  # fmt: skip
        measured = []
        started = time.perf_counter() - t1
        for c in clients:
            out = json.loads(c.communicate()[0])
            measured.append(out["end"]["sum_received"]["bits_per_second"] / 8 / 1e9 / args.scale)
        for s in servers:
            s.wait(timeout=30)
        # the path each flow took, as directed links of the lab
        cap: list[float] = []
        index: dict[str, int] = {}

        def lid(key: str, gbytes: float) -> int:
            if key not in index:
                index[key] = len(cap)
                cap.append(gbytes)
            return index[key]

        seen: dict[tuple[str, int], tuple[str, int]] = {}  # (ns, flow) -> (dev, bytes)
        for ns in outs:
            out = json.loads(sh("nft", "-j", "list", "table", "inet", "predict", ns=ns))
            for item in out["nftables"]:
                rule = item.get("rule")
                if not rule:
                    continue
                dev = port = got = None
                for expr in rule["expr"]:
                    match = expr.get("match", {})
                    if match.get("left", {}).get("meta", {}).get("key") == "oifname":
                        dev = match["right"]
                    elif "payload" in match.get("left", {}):
                        port = int(match["right"]) - 40000
                    elif "counter" in expr:
                        got = expr["counter"]["bytes"]
                if got and got > seen.get((ns, port), ("", 0))[1]:
                    seen[(ns, port)] = (dev, got)
        rows, links = [], []
        for n, (a, b) in enumerate(pairs):
            up = seen[(sw[leaves[0]], n)][0]
            spine, e = next((s, e) for s in spines for e in ups[(leaves[0], s)] if e[0] == up)
            down = seen[(sw[spine], n)][0]
            back = next(e for e in ups[(leaves[1], spine)] if e[2] == down)
            if args.verbose:
                print(f"  path {a} -> {b}: {leaves[0]} {up} -> {spine} {down}")
            rows += [n] * 4
            links += [
                lid(f"nic {a}", fab.cap[fab.nic[a][1]]),
                lid(f"up {up}", e[4]),
                lid(f"down {spine} {down}", back[4]),
                lid(f"nic {b}", fab.cap[fab.nic[b][2]]),
            ]
        rate = flows.max_min(np.array(rows), np.array(links), np.ones(len(rows)),
                             np.array(cap), flows=len(pairs), groups=1)  # fmt: skip
        errors = [abs(m - p) / p for m, p in zip(measured, rate, strict=True)]
        print(f"{len(pairs)} flows, Linux L4 ECMP, TCP (iperf3) vs max-min (GB/s at full scale);"
              f" lab built in {t1 - t0:.0f} s, clients started within {started:.1f} s, flows"
              f" {time.perf_counter() - t1:.0f} s:")  # fmt: skip
        for (a, b), m, p, e in zip(pairs, measured, rate, errors, strict=True):
            if not args.quiet:
                print(f"  {a} -> {b}: measured {m:6.2f}  predicted {p:6.2f}  error {e:5.1%}")
        worst = max(errors)
        total = sum(measured) / float(np.sum(rate)) - 1
        print(
            f"per-flow error: median {np.median(errors):.1%}, worst {worst:.1%} (issue #43: <= 15 %);"
            f" all flows together {total:+.1%}; within 15 %: {sum(e <= 0.15 for e in errors)}"
            f" of {len(errors)}"
        )
        return 0 if worst <= 0.15 else 1
    finally:
        if not args.keep:
            lab.down()


if __name__ == "__main__":
    sys.exit(main())
