"""The command line's grammar: every command, its arguments and the help that teaches them."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from generator import __version__

EPILOG = """\
examples:
  wanka validate blueprints/pod-128.yaml
  wanka generate blueprints/pod-128.yaml              # -> inventories/pod-128/
  wanka generate blueprints/pod-128.yaml --check      # exit 1 and list files that would change
  wanka schema > wanka-v1.schema.json                 # JSON Schema for editors
  wanka catalog                                       # hardware models a blueprint can name
  wanka catalog ce16808                               # one model's values, each with its source
  wanka size --params 1e12 --tokens 1e13 --days 30 --mfu 0.5 --write blueprints/my.yaml

  wanka diff origin/main:blueprints/pod-128.yaml blueprints/pod-128.yaml   # for a PR comment
  wanka site init inventories/pod-128                 # -> inventories/pod-128.site/ to fill

exit codes: 0 ok, 1 --check found drift or diff found changes, 2 invalid blueprint (FILE:LINE:COL: yaml.path: problem (hint))
"""


STRICT = (
    "warnings fail too (exit 2, nothing written): for CI; each warning's hint names the "
    "blueprint setting that removes it"
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="wanka",
        description="Expand one cluster blueprint into cabling plans, configs, rank tables and inventories.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"wanka {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser(
        "generate",
        help="expand a blueprint into its output folder",
        description="Validate, expand, check and write every artifact of a blueprint.",
    )
    g.add_argument("blueprint", help="blueprint YAML file")
    g.add_argument(
        "-o", "--output", metavar="DIR", help="output folder (default inventories/<metadata.name>)"
    )
    g.add_argument(
        "--facts",
        metavar="FILE",
        help="NPU facts collected by roles/npu_facts (A3 SDIDs; default: the blueprint's hccl.facts)",
    )
    g.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and list files that would change",
    )
    g.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stage progress on stderr (default: when stderr is a terminal)",
    )
    g.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no summary line and no warning the blueprint accepts (design.accept; the design "
        "review lists them); errors and other warnings still print",
    )
    g.add_argument(
        "-v", "--verbose", action="store_true", help="also print informational design findings"
    )
    g.add_argument("--strict", action="store_true", help=STRICT)

    v = sub.add_parser(
        "validate",
        help="check blueprints without writing anything",
        description="Schema, semantic and design checks; writes nothing.",
    )
    v.add_argument("blueprints", nargs="+", metavar="blueprint")
    v.add_argument(
        "-v", "--verbose", action="store_true", help="also print informational design findings"
    )
    v.add_argument("--strict", action="store_true", help=STRICT)

    r = sub.add_parser(
        "ranktable",
        help="write an HCCL rank table for a job, placed on the fewest leaves",
        description="Choose servers for a job (fewest leaves, then fewest pods/supernodes) and write its "
        "HCCL rank table. Prints the servers' spread and the tiers the job's traffic crosses on stderr.",
    )
    job_arguments(r)
    r.add_argument(
        "-o", "--output", metavar="FILE", help="write the rank table here (default: stdout)"
    )

    pl = sub.add_parser(
        "placement",
        help="which network tier each parallel group of a job crosses",
        description="Lay a job's tp/sp/dp/pp/ep groups over its ranks (tp fastest, then sp, dp, pp) and report "
        "the widest tier each kind crosses; warns when tp, sp or ep leave the server or supernode. "
        "Defaults come from the blueprint's hccl.parallelism.",
    )
    job_arguments(pl)
    for name, text in (
        ("tp", "tensor"),
        ("pp", "pipeline"),
        ("dp", "data (default: what is left)"),
        ("sp", "sequence"),
        ("ep", "expert"),
    ):
        pl.add_argument(f"--{name}", type=int, metavar="N", help=f"{text} parallel size")

    sz = sub.add_parser(
        "size",
        help="size a cluster from a model and write a starting blueprint",
        description="Work (6 x N x D FLOPs), cards for a training window at an MFU, the memory floor "
        "of weights + gradients + optimizer states, rounded up to whole leaves (or supernodes). "
        "Prints the arithmetic; --write saves a blueprint that validates and generates.",
    )
    sz.add_argument("--params", type=float, required=True, metavar="N", help="model parameters")
    sz.add_argument("--tokens", type=float, required=True, metavar="D", help="training tokens")
    sz.add_argument("--days", type=float, required=True, help="training window in days")
    sz.add_argument("--mfu", type=float, default=0.5, help="model FLOPs utilisation (default 0.5)")
    sz.add_argument(
        "--card-tflops",
        type=float,
        default=300.0,
        metavar="T",
        help="peak dense TFLOPS of one card at --precision (default 300)",
    )
    sz.add_argument(
        "--overhead",
        type=float,
        default=1.3,
        help="factor for restarts, checkpoints and idle time (default 1.3)",
    )
    sz.add_argument("--server", default="atlas-800t-a2", help="NPU server model (catalog name)")
    sz.add_argument("--leaf", help="parameter leaf model (default: the schema's)")
    sz.add_argument(
        "--precision",
        default="bf16",
        choices=("fp32", "bf16", "fp16", "fp8", "mixed"),
        help="training precision; mixed = bf16 + fp32 master weights and moments (default bf16)",
    )
    sz.add_argument(
        "--hbm-gb", type=float, default=64.0, help="HBM per card in GB (default 64) [U]"
    )
    sz.add_argument(
        "--supernode", type=int, default=0, metavar="SERVERS", help="servers per supernode"
    )
    sz.add_argument("--write", metavar="FILE", help="write the starting blueprint here")
    sz.add_argument("--name", help="metadata.name (default: the file name)")
    sz.add_argument("--force", action="store_true", help="replace an existing --write file")

    df = sub.add_parser(
        "diff",
        help="what changes in the build between two blueprints (for pull requests)",
        description="Compare the builds of two blueprints: cables added, removed or re-patched, devices, "
        "addresses, ASNs, ranks and switch configuration lines. Each side is a file or REF:path "
        "read with git show. Every change is an addition or a disturbance of installed gear (a moved "
        "device, a re-patched cable, a changed address, ASN or rank, a switch config losing lines); "
        "disturbances are listed first. Exit 1 when something changes (with --fail-on disturbance: "
        "only when installed gear is disturbed), 0 otherwise, 2 for invalid input.",
    )
    df.add_argument(
        "old", help="blueprint file or REF:path (e.g. origin/main:blueprints/pod-128.yaml)"
    )
    df.add_argument("new", help="blueprint file or REF:path")
    df.add_argument("--format", choices=("md", "json"), default="md", help="output (default md)")
    df.add_argument(
        "--fail-on",
        choices=("change", "disturbance"),
        default="change",
        help="exit 1 on any change (default), or only on a disturbance (for CI on a phased build)",
    )

    vf = sub.add_parser(
        "verify",
        help="prove plane isolation, management ACLs, no clear secrets, no NFS in an output folder",
        description="Read a generated folder (switch configs, hosts.yml, hccn files, cabling) and prove "
        "that the parameter, storage, business, in-band and out-of-band planes reach one another "
        "only through the border firewalls, that SSH/SNMP/VTY access is limited by an ACL to the "
        "management pools, that no secret is in clear and that nothing mounts or exports NFS. "
        "Exit 0 when all hold, 1 with each offending file:line (and graph path), 2 for a folder "
        "wanka did not write.",
    )
    vf.add_argument("folders", nargs="+", metavar="folder", help="e.g. inventories/pod-128")

    pr = sub.add_parser(
        "predict",
        help="the HCCL bandwidth a rendered cluster should reach, per acceptance scope",
        description=textwrap.fill(
            "Read a generated folder (cabling, switch ECMP widths, hccn files, rank "
            "tables, the acceptance plan) and predict the bus bandwidth of HCCL AllReduce/AllGather "
            "per acceptance scope, with no failure and under each single spine and uplink failure: "
            "HCCL's hierarchical algorithm (mesh in the server, ring/NHR/HD across servers), every "
            "flow hashed over the equal-cost paths (a distribution over hash seeds: Huawei's hash "
            "is not public), links shared max-min fairly. Prints p5/p50/p95 in 10^9 bytes/s. "
            "Flow level only: no PFC/DCQCN dynamics. Exit 2 for a folder wanka did not write.",
            width=78,
        ),
        epilog="examples:\n"
        "  wanka predict inventories/pod-128\n"
        "  wanka predict inventories/pod-128 --scope cluster --format markdown\n"
        "  wanka ranktable blueprints/pod-128.yaml --servers 4 -o job.json\n"
        "  wanka predict inventories/pod-128 --ranktable job.json --scope none\n"
        "  wanka predict inventories/pod-128 --placement 64\n"
        "  wanka predict inventories/pod-128 --write   # the acceptance role's thresholds\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pr.add_argument("folder", help="a generated folder, e.g. inventories/pod-128")
    pr.add_argument(
        "--scope",
        action="append",
        metavar="NAME",
        help="an acceptance scope by name (cluster/all_reduce) or kind (leaf, pod, cluster, "
        "leaf-pair, server); repeat for more; `none` for the rank table only (default: all)",
    )
    pr.add_argument("--ranktable", metavar="FILE", help="a job's rank table (wanka ranktable)")
    pr.add_argument("--size", type=int, help="bytes per rank (default: the plan's judged size)")
    pr.add_argument("--seeds", type=int, default=32, help="hash draws per scope (default 32)")
    pr.add_argument(
        "--qps",
        type=int,
        default=1,
        help="QPs per rank pair, HCCL_RDMA_QPS_PER_CONNECTION (default 1, HCCL's default)",
    )
    pr.add_argument(
        "--algo",
        choices=("auto", "ring", "nhr", "hd"),
        default="auto",
        help="level1 algorithm as HCCL_ALGO would force it (default: HCCL's own choice)",
    )
    pr.add_argument("--no-failures", action="store_true", help="skip the single failures")
    pr.add_argument(
        "--placement",
        type=int,
        metavar="CARDS",
        help="advise servers, rank order, level1 algorithm and QPs for a job of CARDS NPUs "
        "(least predicted collision loss), beside plain rank order",
    )
    pr.add_argument("--format", choices=("yaml", "markdown"), default="yaml")
    pr.add_argument(
        "--write",
        action="store_true",
        help="write the acceptance role's pass thresholds (p5 x (1 - margin)) per scope and "
        "condition to <folder>.site/acceptance/expected.yml, and expected.md beside it",
    )
    pr.add_argument(
        "--margin",
        type=float,
        default=0.10,
        help="threshold = p5 x (1 - MARGIN) (default 0.10: the model's error against the "
        "public figures; see expected.yml)",
    )

    st = sub.add_parser(
        "site",
        help="write the site overlay <folder>.site/: the variables a real run needs",
        description="The site overlay beside a generated folder holds what no generated file "
        "provides; `init` writes it from the folder (not the blueprint).",
    )
    si = st.add_subparsers(dest="site_command", required=True, metavar="init").add_parser(
        "init",
        help="write <folder>.site/ with every site variable a real run needs, empty",
        description="Write <folder>.site/group_vars/all/site.yml (ZTP identities per switch with "
        "rack and U, host interface names per model, the list the first play of site.yml "
        "checks) and vault.yml (every Vault secret the configurations and roles reference, to "
        "encrypt with ansible-vault), and an empty hosts.yml; never touches the folder. Exit 2 "
        "for a folder wanka did not write or an overlay file that exists (without --force).",
    )
    si.add_argument("folder", help="a generated folder, e.g. inventories/pod-128")
    si.add_argument("--force", action="store_true", help="replace overlay files that exist")

    tw = sub.add_parser(
        "twin",
        help="run an output folder in network namespaces with FRR, nftables and dnsmasq (root)",
        description="A digital twin of a generated folder: one network namespace per device and "
        "VPN, a veth pair per cable, the rendered CE/NE/USG configs translated to FRR and "
        "nftables, hosts configured from the keyfiles the host_network role writes. `test` "
        "proves with real packets that every session comes up, ECMP is as wide as the configs "
        "claim, every required flow works and no forbidden one does, each M-LAG pair's "
        "dual-active detection reaches its peer, then cuts a spine, a leaf uplink, a firewall, "
        "one core-to-firewall link and a provider link and times the reconvergence; `grow` applies a "
        "larger build to the running twin (day 200) and proves nothing installed was disturbed; "
        "`export` writes it as a containerlab topology for a build larger than one machine. "
        "Exit 0 when all "
        "hold, 1 naming the device and file:line behind each failure, 2 when the machine lacks "
        "root or the packages (frr, nftables, dnsmasq-base).",
    )
    twin = tw.add_subparsers(dest="twin_command", required=True,
                             metavar="up|test|prove|grow|export|down|exec")  # fmt: skip
    for name, text in (("up", "bring the twin up and leave it running"),
                       ("test", "bring it up (unless it is), prove, report, take it down"),
                       ("grow", "apply a grown output (inside the running folder's growth plan) "
                        "to the running twin: no session may reset, no route change")):  # fmt: skip
        t = twin.add_parser(name, help=text)
        t.add_argument("folder", help="e.g. inventories/pod-128"
                       + (" generated again with more compute.cards" if name == "grow" else ""))  # fmt: skip
        if name != "grow":
            t.add_argument("--pod", type=int, default=0, metavar="N",
                           help="pod N of the parameter plane only, the other pods stood in for "
                           "by the cores (a build too large for one machine, e.g. wanka-10k)")  # fmt: skip
            t.add_argument("--collection", type=Path, metavar="DIR",
                           help="run the roles of the Ansible collection in DIR (a checkout's "
                           "root; default: the one this wanka ships)")  # fmt: skip
        if name == "up":
            t.add_argument("--no-hosts", action="store_true",
                           help="the devices only: the host_network role is not run, the hosts' "
                           "namespaces are cabled but not configured (`test` and `grow` refuse "
                           "such a twin: its flows need the hosts)")  # fmt: skip
        if name == "test":
            t.add_argument("--report", default="twin-report.md", help="default twin-report.md")
            t.add_argument("--no-drills", action="store_true", help="skip the failure drills")
            t.add_argument("--keep", action="store_true", help="leave the twin up afterwards")
    xp = twin.add_parser(
        "export",
        help="write the twin as a containerlab topology, for several machines (no root)",
        description="Write the twin's plan of FOLDER as a containerlab topology into DIR: "
        "DIR/NAME.clab.yml with one `linux` node per twin namespace (FRR routers with their "
        "translated frr.conf and daemons bound in, hosts, NPU NIC stacks, BMCs), one link per "
        "cable of files/cabling.csv as endpoints NODE:IFACE, each node's addresses, bridges and "
        "routes as `exec` commands, its sysctls and nftables ruleset; DIR/NAME/interfaces.csv "
        "maps each Linux interface name (15 characters at most) back to its device and port. "
        "Run it with `containerlab deploy -t DIR/NAME.clab.yml` on one or more hosts, or "
        "under clabernetes on Kubernetes: a build larger than one machine runs whole there, "
        "where `twin up` takes it one pod at a time. DIR is replaced atomically (only if it is "
        "empty or an earlier export). No root needed: it writes files only, nothing runs. Exit 2 "
        "for a folder the twin refuses, naming file:line.",
        epilog="example: wanka twin export --containerlab lab/ inventories/pod-128 && "
        "sudo containerlab deploy -t lab/pod-128.clab.yml",
    )
    xp.add_argument("folder", help="a generated folder, e.g. inventories/pod-128")
    xp.add_argument("--containerlab", required=True, metavar="DIR",
                    help="the folder to write the topology into")  # fmt: skip
    xp.add_argument("--name", help="the topology's name (default: the folder's name)")
    xp.add_argument("--pod", type=int, default=0, metavar="N",
                    help="pod N of the parameter plane only, as `twin up --pod` runs it")  # fmt: skip
    xp.add_argument("--frr-image", metavar="IMAGE",
                    help="the routers' image (default: containerlab's frr01 example's, "
                    "quay.io/frrouting/frr:10.5.1)")  # fmt: skip
    xp.add_argument("--host-image", metavar="IMAGE",
                    help="the other nodes' image (default: frr01's hosts', "
                    "wbitt/network-multitool:3.22.2)")  # fmt: skip
    pr = twin.add_parser(
        "prove",
        help="run every switch, router and firewall once, in shards that fit this machine",
        description="Cut the build into shards that fit the memory (--memory, default half of "
        "what is available; about 11 MiB per FRR daemon): an OSPF area, a static route or a VLAN "
        "is never cut, an eBGP session may be (a pod with its spines and the cores cabled to "
        "it, or a plane's spines with as many leaves as fit). Each shard runs in full; each "
        "neighbour across a cut session is a real bgpd announcing what that neighbour's own "
        "FRR had as best when its shard ran; the shards run again until no boundary changes "
        "(a fixpoint, its passes printed). Per shard: every BGP/OSPF session, every leaf's route "
        "to every leaf subnet of the build with the design's ECMP width (its FIB), NPU to NPU "
        "across its leaves (packets), and where it holds the provider and the hosts the "
        "required and forbidden flows. Prints shards, routers, seconds, peak memory. Exit 0 "
        "when all hold, 1 naming the device and file:line of each failure, 2 for a folder it "
        "refuses or a part over --memory that cannot be cut.",
    )
    pr.add_argument("folder", help="a generated folder, e.g. inventories/cluster-1k")
    pr.add_argument("--memory", type=int, default=0, metavar="MIB",
                    help="the most one shard may take (MiB of FRR daemons); smaller: more "
                    "shards, e.g. --memory 1000 cuts cluster-1k in 4")  # fmt: skip
    pr.add_argument(
        "--no-flows",
        action="store_true",
        help="skip the required and forbidden flows (no host_network run)",
    )
    pr.add_argument("--no-drills", action="store_true",
                    help="skip the drills (each shard: every single spine down, one uplink down "
                    "per leaf class, the FIBs' widths after each)")  # fmt: skip
    pr.add_argument("--since", metavar="PREVIOUS",
                    help="re-prove only the shards whose namespaces the output changed since the "
                    "green proof of PREVIOUS (a folder proved earlier on this machine; FOLDER "
                    "itself when generated again in place); the others are carried")  # fmt: skip
    pr.add_argument("--fibs", metavar="FILE",
                    help="write every device's FIB (JSON) from the shard it ran in, to compare "
                    "two runs")  # fmt: skip
    pr.add_argument("--logs", type=Path, metavar="DIR",
                    help="keep the FRR logs (every daemon, the boundary speakers' too) of a "
                    "shard run with a failing check in DIR/shard-N-pass-P (by default they go "
                    "with the shard)")  # fmt: skip
    pr.add_argument(
        "--collection",
        type=Path,
        metavar="DIR",
        help="run the roles of the Ansible collection in DIR (default: this wanka's)",
    )
    twin.add_parser("down", help="remove every namespace, process and file of the twin")
    ex = twin.add_parser("exec", help="a command in a device's namespace; none: its interfaces")
    ex.add_argument("device", help="e.g. par-leaf-0001 (vtysh reaches its FRR)")
    ex.add_argument("--part", help="a VPN or part: management_vpn, npu, bmc")
    # dest exec_argv, not command: `command` holds the wanka command that cli.main dispatches on,
    # and a sub-parser's values overwrite its parent's (every `twin exec DEVICE CMD` ended in
    # TypeError: unhashable type: 'list')
    ex.add_argument("exec_argv", metavar="command", nargs=argparse.REMAINDER,
                    help="e.g. vtysh -c 'show bgp summary'")  # fmt: skip

    sub.add_parser(
        "ansible-path",
        help="print where the Ansible collection (ansible.cfg, site.yml, roles, playbooks) is",
        description="Print the folder of the wanka.cluster Ansible collection this wanka ships: "
        "ANSIBLE_CONFIG=$(wanka ansible-path)/ansible.cfg ansible-playbook "
        "-i inventories/NAME/hosts.yml $(wanka ansible-path)/site.yml",
    )
    sub.add_parser("schema", help="print the blueprint JSON Schema (Draft 2020-12)")
    c = sub.add_parser(
        "catalog",
        help="list hardware models a blueprint can name, or every value the design uses of one",
    )
    c.add_argument("model", nargs="?", help="a model: ports, power, U, parts, licences, sources")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def job_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("blueprint", help="blueprint YAML file")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--servers", type=int, metavar="N", help="number of servers")
    size.add_argument(
        "--cards", type=int, metavar="N", help="number of cards (a multiple of NPUs per server)"
    )
    p.add_argument(
        "--hosts", metavar="LIST", help="comma-separated servers to choose from (default: all)"
    )
    p.add_argument("--exclude", metavar="LIST", default="", help="comma-separated drained servers")
    p.add_argument(
        "--facts",
        metavar="FILE",
        help="NPU facts collected by roles/npu_facts (A3 SDIDs; default: the blueprint's hccl.facts)",
    )
