"""Tolly's test topology as a rendered folder (issue #43): 8 servers of 8 x 400GE NPU ports,
4 leaves of 2 servers (16 ports down, 8 up to each of 2 spines: 1:1), 2 spines. Written as
wanka writes the files predict reads (files/cabling.csv, files/hccn, files/switches), for the
ECMP/NSLB cross-check; the servers' HCCS bound is given to the model by the caller."""

from __future__ import annotations

import json
from pathlib import Path

HEADER = (
    "cable_id,plane,a_device,a_port,a_rack,a_u,b_device,b_port,b_rack,b_u,speed,media,"
    "length_m,trunk_id,cassette,cassette_rack,cassette_port,trunk_m"
)


def write(folder: Path, servers: int = 8, leaves: int = 4, spines: int = 2, ports: int = 8):
    rows, n = [HEADER], 0

    def cable(a, pa, b, pb):
        nonlocal n
        n += 1
        rows.append(f"P{n:04d},parameter,{a},{pa},R,1,{b},{pb},R,2,400GE,AOC,3,,,,0,0")

    (folder / "files" / "hccn").mkdir(parents=True)
    (folder / "files" / "switches").mkdir(parents=True)
    (folder / "files" / "hccl").mkdir(parents=True)
    per_leaf = servers // leaves
    table = []
    for s in range(servers):
        host, leaf = f"srv-{s + 1}", f"leaf-{s // per_leaf + 1}"
        conf, devices = [], []
        for i in range(ports):
            ip = f"10.0.{s}.{i + 2}"
            conf += [f"address_{i}={ip}", f"netmask_{i}=255.255.255.0", f"mtu_{i}=4200"]
            cable(host, f"npu{i}", leaf, f"400GE1/0/{(s % per_leaf) * ports + i + 1}")
            devices.append({"device_id": str(i), "device_ip": ip, "rank_id": str(s * ports + i)})
        (folder / "files" / "hccn" / f"{host}.conf").write_text("\n".join(conf) + "\n")
        table.append({"server_id": host, "device": devices})
    up = per_leaf * ports
    for leaf in range(leaves):
        for k in range(up):
            cable(
                f"leaf-{leaf + 1}",
                f"400GE1/1/{k + 1}",
                f"spine-{k % spines + 1}",
                f"400GE1/{leaf}/{k // spines + 1}",
            )
        (folder / "files" / "switches" / f"leaf-{leaf + 1}.cfg").write_text(
            f"bgp 65001\n ipv4-family unicast\n  maximum load-balancing {up}\n"
        )
    for spine in range(spines):
        (folder / "files" / "switches" / f"spine-{spine + 1}.cfg").write_text(
            f"bgp 65000\n ipv4-family unicast\n  maximum load-balancing {up // spines}\n"
        )
    (folder / "files" / "cabling.csv").write_text("\n".join(rows) + "\n")
    rank_table = {"version": "1.0", "server_count": str(servers), "server_list": table}
    (folder / "files" / "hccl" / "rank_table.json").write_text(json.dumps(rank_table))
    return folder
