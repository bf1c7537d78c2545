#!/usr/bin/env python3
"""Cross-check (issue #43): predict's per-flow max-min rates against real Linux ECMP and TCP.

Run (root; Debian iproute2 and iperf3): python tests/benchmarks/bench_predict_twin.py
        [--folder inventories/pod-128] [--seconds 12] [--scale 5e-5]

A reduction of a rendered pod-128: its first two parameter leaves, every spine and every
leaf-spine cable between them as read by generator/predict/fabric.py from files/cabling.csv,
the ECMP widths of the switches' `maximum load-balancing`, and the NPU ports of the servers on
those leaves, each device a network namespace joined by veth pairs shaped with tc tbf to the
cable's speed x scale (200GE -> 10 Mbit/s at 5e-5), FIFO (this kernel has no fair-queueing
qdisc: fq_codel, fq and sfq are refused), so TCP's own sharing stands for max-min. Routes are static ECMP routes (one nexthop
per equal link, at most the switch's width) and every router hashes on L4
(net.ipv4.fib_multipath_hash_policy=1). One iperf3 TCP flow per NPU of the first leaf to the
same NPU index on the second leaf, each with its own source port. The path each flow took is
read from nftables counters per flow and output port at the leaf and the spines (`ip route
get ... sport ... ipproto tcp` was seen to name other ports than the packets took), those paths are handed to flows.max_min, and each flow's measured rate is held
against its prediction: the issue asks +/-15 % per flow. Namespaces are named predict-*, and
removed at the end (also on failure).

Measured here (kernel 6.18, 30 s, 32 flows, pod-128's first two leaves and four spines): all
flows together within 5 % of the model (-4.4 %), so paths and capacities are read right; per
flow the median error is 28-45 % and 4-9 of 32 are within 15 %: TCP over FIFO queues does not
share a link max-min fairly flow by flow, and this kernel refuses every fair-queueing qdisc
that would make it do so. The +/-15 % per flow of issue #43 is not met by this check.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator.predict import fabric, flows  # noqa: E402

PREFIX = "predict-"


def sh(*args: str, ns: str | None = None, check: bool = True) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    return subprocess.run(cmd, check=check, capture_output=True, text=True).stdout


class Lab:
    def __init__(self, scale: float, latency: int) -> None:
        self.scale = scale
        self.latency = latency
        self.names: list[str] = []
        self.pair = 0

    def ns(self, name: str) -> str:
        full = PREFIX + name
        sh("ip", "netns", "add", full)
        sh("ip", "link", "set", "lo", "up", ns=full)
        sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=full)
        sh("sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=1", ns=full)
        self.names.append(full)
        return full

    def link(self, a: str, b: str, gbytes: float) -> tuple[str, str, str, str]:
        """A veth pair a<->b on a /31, both ends shaped to gbytes x scale; (dev a, ip a, dev b,
        ip b)."""
        i = self.pair
        self.pair += 1
        da, db = f"v{i}a", f"v{i}b"
        sh("ip", "link", "add", da, "netns", a, "type", "veth", "peer", "name", db, "netns", b)
        net = 10 << 24 | 200 << 16 | (2 * i) & 0xFFFF
        ipa = ".".join(str(net >> s & 255) for s in (24, 16, 8, 0))
        ipb = ".".join(str((net + 1) >> s & 255) for s in (24, 16, 8, 0))
        kbit = max(1, round(gbytes * 8e6 * self.scale))
        for ns, dev, ip in ((a, da, ipa), (b, db, ipb)):
            sh("ip", "addr", "add", f"{ip}/31", "dev", dev, ns=ns)
            sh("ip", "link", "set", dev, "up", ns=ns)
            sh("tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", f"{kbit}kbit",
               "burst", "8kb", "latency", f"{self.latency}ms", ns=ns)  # fmt: skip
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
    ap.add_argument("--keep", action="store_true", help="leave the namespaces (predict-*)")
    args = ap.parse_args()
    fab = fabric.load(Path(args.folder))
    leaf_of = {ip: fab.switches[sw] for ip, (sw, _, _) in fab.nic.items()}
    leaves = sorted(set(leaf_of.values()))[:2]
    spines = sorted({fab.switches[v] for v, _ in fab.up[leaves[0]]})
    lab = Lab(args.scale, args.latency)
    try:
        sw = {name: lab.ns(name) for name in leaves + spines}
        ups: dict[tuple[str, str], list[tuple]] = {}  # (leaf, spine) -> veths, cabling order
        for leaf in leaves:
            for v, link in fab.up[leaf]:
                spine = fab.switches[v]
                if spine in spines:
                    ends = lab.link(sw[leaf], sw[spine], fab.cap[link])
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
        for n, (a, b) in enumerate(pairs):
            ns_a, ip_a, _ = npus[a]
            cmd = ["iperf3", "-c", npus[b][1], "-p", str(5201 + n), "-B", ip_a, "--cport",
                   str(40000 + n), "-t", str(args.seconds), "-O", "3", "-J"]  # fmt: skip
            clients.append(subprocess.Popen(["ip", "netns", "exec", ns_a, *cmd],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))  # fmt: skip
        measured = []
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
        print(f"{len(pairs)} flows, Linux L4 ECMP, TCP (iperf3) vs max-min (GB/s at full scale):")
        for (a, b), m, p, e in zip(pairs, measured, rate, errors, strict=True):
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
