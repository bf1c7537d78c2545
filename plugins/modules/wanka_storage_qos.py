#!/usr/bin/python
"""Ansible module: one storage NIC's RoCE class to the storage plane's lossless class. Every
value is read first and set only where it differs; after a change it is read back and a value
that does not stick fails the task.

1. The NIC: only an mlx5_core port is configured (the catalog's `storage_nic`, host_vars
   storage_nic_driver); the port's own driver (/sys/class/net/IF/device/driver, what `ethtool -i`
   prints) must be the catalog's. Anything else is refused before a value is touched.
2. mlnx_qos (NVIDIA mlnx-tools, python/mlnx_qos): trust DSCP, the class's DSCP mapped to its
   priority, PFC on that priority only. Output read (pretty_print): `Priority trust state: dscp`,
   the `dscp2prio mapping:` lines `\tprio:<p> dscp:<d>,<d>,...`, and under `PFC configuration:`
   the row `\tenabled  0 0 0 0 1 0 0 0`. Set with the tool's own `--trust dscp`,
   `--dscp2prio set,<dscp>,<prio>`, `--pfc <8 comma-separated 0/1>` (one option per call).
3. ECN / DCQCN on the lossless priority, notification point and reaction point:
   /sys/class/net/IF/ecn/roce_np/enable/<prio> and .../roce_rp/enable/<prio> read `0`/`1`, set
   with `echo 1 >` (NVIDIA MLNX_OFED / DOCA docs "Explicit Congestion Notification (ECN)": "X:
   priority {0..7}, protocol: roce_rp / roce_np"; the MLNX_OFED mlx5_core creates them,
   en_sysfs.c mlx5e_sysfs_create / mlx5e_fill_attributes, shown by en_ecn.c
   mlx5e_show_ecn_enable as "%d\n", as carried in oracle/linux-uek).
4. The TOS rdma_cm gives a connection whose consumer sets none (rdma_set_option): TOS 0 lands in
   priority 0, lossy. The kernel's rdma_cm configfs default_roce_tos
   (/sys/kernel/config/rdma_cm/<ibdev>/ports/<port>/default_roce_tos; kernel
   Documentation/ABI/testing/configfs-rdma_cm, 0-255, since 4.11; drivers/infiniband/core/
   cma_configfs.c: shown "%u\n", stored with kstrtou8; cma.c cma_resolve_iboe_route uses it when
   the id has no TOS of its own). The <ibdev> directory is created with mkdir (the kernel adds
   ports/<n>/), as NVIDIA's cma_roce_tos script does (mlnx-tools sbin/cma_roce_tos, which also
   reports "Device X port N does not exist"). The ibdev and port of IF are found as mlnx-tools
   ibdev2netdev finds them: /sys/class/infiniband/<ibdev>/ports/<port>/gid_attrs/ndevs/0 names IF.
   [unconfirmed] whether the OceanStor DPC client connects through rdma_cm without its own TOS
   (then this default is what it sends) or sets one itself: no public Huawei document says;
   confirm after a DPC mount on the storage leaf (`display qos queue statistics interface <port>`
   counts the DPC traffic in the lossless queue).
The values do not survive a reboot or a driver reload: run the role again after either.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: wanka_storage_qos
short_description: RoCE class of one storage NIC (mlnx_qos, NIC ECN, rdma_cm default TOS)
options:
  interface: {description: Interface name, type: str, required: true}
  priority: {description: The lossless priority (PFC and ECN on it), type: int, required: true}
  dscp: {description: DSCP of the RoCE traffic, mapped to the priority, type: int, required: true}
  tos: {description: rdma_cm default RoCE TOS (DSCP x 4), type: int, required: true}
  ecn: {description: Enable NIC ECN (DCQCN NP and RP) on the priority, type: bool, default: true}
  driver: {description: The catalog's driver of the storage NIC (only mlx5_core is configured), type: str, default: ''}
  mlnx_qos: {description: Path of mlnx_qos, type: str, default: /usr/bin/mlnx_qos}
  root: {description: Root directory prefix of /sys and the test doubles (WANKA_ROOT), type: str, default: ''}
"""

SUPPORTED_DRIVER = "mlx5_core"  # mlnx_qos and the ecn/ sysfs above are mlx5_core's
TRUST = re.compile(r"^Priority trust state:\s*(\S+)", re.M)
PRIO_DSCP = re.compile(r"^\s*prio:(\d)\s+dscp:([\d,]+)", re.M)
ENABLED = re.compile(r"^\s*enabled\s+((?:[01]\s+){7}[01])", re.M)


def parse(text: str) -> dict:
    """The state mlnx_qos prints: trust, dscp -> priority, PFC enabled per priority."""
    trust = TRUST.search(text)
    enabled = ENABLED.search(text)
    dscp_prio = {
        int(d): int(p) for p, ds in PRIO_DSCP.findall(text) for d in ds.split(",") if d.strip()
    }
    return {
        "trust": trust.group(1) if trust else "",
        "dscp_prio": dscp_prio,
        "pfc": [int(x) for x in enabled.group(1).split()] if enabled else [],
    }


def rdma_port(sysfs: Path, interface: str) -> tuple[str, str] | None:
    """(ibdev, port) whose GID 0 belongs to the interface, as ibdev2netdev pairs them."""
    for ndev in sorted(sysfs.glob("class/infiniband/*/ports/*/gid_attrs/ndevs/0")):
        try:
            name = ndev.read_text().strip()
        except OSError:  # an empty GID entry reads as an error
            continue
        if name == interface:
            return ndev.parents[4].name, ndev.parents[2].name
    return None


def read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "interface": {"type": "str", "required": True},
            "priority": {"type": "int", "required": True},
            "dscp": {"type": "int", "required": True},
            "tos": {"type": "int", "required": True},
            "ecn": {"type": "bool", "default": True},
            "driver": {"type": "str", "default": ""},
            "mlnx_qos": {"type": "str", "default": "/usr/bin/mlnx_qos"},
            "root": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    p = module.params
    intf, prio = p["interface"], p["priority"]
    sysfs = Path(p["root"] or "/") / "sys"
    env = {"WANKA_ROOT": p["root"]} if p["root"] else {}

    if p["driver"] != SUPPORTED_DRIVER:
        module.fail_json(
            msg=f"{intf}: storage NIC driver {p['driver'] or '(none in the catalog)'!r}: this "
            f"role configures only {SUPPORTED_DRIVER} NICs (mlnx_qos, MLNX_OFED ECN sysfs); "
            "give the server model's catalog storage_nic or configure the NIC by hand. "
            "Nothing was changed."
        )
    link = sysfs / "class/net" / intf / "device/driver"
    found = os.path.basename(os.readlink(link)) if link.is_symlink() else ""
    if found != p["driver"]:
        module.fail_json(
            msg=f"{intf}: the port's driver is {found or 'unknown'!r} ({link}), the catalog's "
            f"storage_nic says {p['driver']!r}: correct the catalog. Nothing was changed."
        )

    def run(*args: str) -> str:
        cmd = [p["mlnx_qos"], "-i", intf, *args]
        rc, out, err = module.run_command(cmd, environ_update=env)
        if rc != 0:
            module.fail_json(msg=f"{' '.join(cmd)} failed: {(err or out).strip()}", rc=rc)
        return out

    ecn_files = (
        {
            f"ecn_{kind}": sysfs / "class/net" / intf / "ecn" / f"roce_{kind}/enable" / str(prio)
            for kind in ("np", "rp")
        }
        if p["ecn"]
        else {}
    )
    for path in ecn_files.values():
        if not path.exists():
            module.fail_json(
                msg=f"{intf}: {path} is missing: NIC ECN is set through the MLNX_OFED mlx5_core "
                "driver's ecn/ sysfs (install MLNX_OFED / DOCA-OFED). Nothing was changed."
            )
    target = rdma_port(sysfs, intf)
    if target is None:
        module.fail_json(
            msg=f"{intf}: no RDMA device has this interface (no "
            f"{sysfs}/class/infiniband/*/ports/*/gid_attrs/ndevs/0 names it)"
        )
    configfs = sysfs / "kernel/config/rdma_cm"
    if not configfs.is_dir():
        module.fail_json(
            msg=f"{configfs} is missing: mount configfs on /sys/kernel/config and "
            "load rdma_cm (as cma_roce_tos does)"
        )
    ibdev, port = target
    tos_file = configfs / ibdev / "ports" / port / "default_roce_tos"

    want_pfc = [1 if i == prio else 0 for i in range(8)]
    qos_steps = {
        "trust": (lambda s: s["trust"] == "dscp", ("--trust", "dscp")),
        "dscp2prio": (
            lambda s: s["dscp_prio"].get(p["dscp"]) == prio,
            ("--dscp2prio", f"set,{p['dscp']},{prio}"),
        ),
        "pfc": (lambda s: s["pfc"] == want_pfc, ("--pfc", ",".join(map(str, want_pfc)))),
    }
    files = {**ecn_files, "roce_tos": tos_file}
    want = {**{name: 1 for name in ecn_files}, "roce_tos": p["tos"]}

    def state() -> dict:
        out = parse(run())
        out.update({name: read_int(path) for name, path in files.items()})
        return out

    def wrong(s: dict) -> list[str]:
        bad = [name for name, (ok, _) in qos_steps.items() if not ok(s)]
        return bad + [name for name in files if s[name] != want[name]]

    before = state()
    changed = wrong(before)
    if changed and not module.check_mode:
        for name in changed:
            if name in qos_steps:
                run(*qos_steps[name][1])
                continue
            if name == "roce_tos" and not tos_file.parent.exists():
                (configfs / ibdev).mkdir(exist_ok=True)  # configfs adds ports/<n>/ itself
                if not tos_file.parent.exists():
                    module.fail_json(msg=f"Device {ibdev} port {port} does not exist ({configfs})")
            try:  # the ECN store refuses (EPERM) a priority with QCN on (en_ecn.c)
                files[name].write_text(f"{want[name]}\n")
            except OSError as e:
                module.fail_json(msg=f"{intf}: echo {want[name]} > {files[name]}: {e.strerror}")
        after = state()
        stuck = wrong(after)
        if stuck:
            module.fail_json(msg=f"{intf}: {', '.join(stuck)} did not stick", state=after)
        before = after
    module.exit_json(
        changed=bool(changed), set=changed, state=before, rdma_device=f"{ibdev} port {port}"
    )


if __name__ == "__main__":
    main()
