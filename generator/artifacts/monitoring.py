"""files/monitoring/: Prometheus configuration that knows the topology.

- prometheus.yml: two scrape jobs, npu-exporter and snmp (through snmp_exporter), and the rules.
- targets/npu-exporter.json, targets/snmp.json: file_sd target groups, one per NPU server and one
  per switch, each labelled with where it is: zone, rack, leaf, pod (spine group), supernode, CDU.
  Every series a target yields carries those labels, so every alert says where in the fabric the
  problem is. file_sd rather than static_configs: prometheus.yml stays small and the same at any
  scale, and Prometheus re-reads changed target files without a reload when servers are added.
- rules/wanka.rules.yml: alerts for the thresholds of the seeds' operational checklist (the article 万卡集群不是堆显卡而是重构算力交付的底层逻辑
  §5) and for the fabric (a leaf or CDU behind many card alerts at once).

Metric names are MindCluster NPU Exporter's (component/npu-exporter in Ascend/mind-cluster, its
Prometheus metrics API doc: temperature in °C, optical power in mW, PFC counters per MAC) and
snmp_exporter's if_mib module (IF-MIB interfaces + ifXTable, labelled ifIndex/ifAlias/ifDescr/
ifName). Checked by `promtool check config` and `promtool check rules` in tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from generator.artifacts import OutputFile, emitter
from generator.model import Cluster, Device, NpuServer, ip
from generator.render import render
from generator.vocab import DomainKind, Plane, Role

NPU_EXPORTER_PORT = 8082  # MindCluster NPU Exporter default (-port=8082)
SNMP_EXPORTER = "127.0.0.1:9116"  # snmp_exporter's default port, next to Prometheus
SNMP_MODULE = "if_mib"
SNMP_AUTH_NAME = "wanka_v3"  # an `auths:` entry of snmp_exporter's snmp.yml (see prometheus.yml)
# snmp_exporter auth_protocol / priv_protocol for the switch configs' SNMPv3 user. [U] whether
# CE's "aes256" key localisation is Blumenthal (AES256) or the Cisco-style AES256C.
AUTH_PROTOCOL = {"sha2-256": "SHA256", "sha": "SHA", "md5": "MD5"}
PRIV_PROTOCOL = {"aes256": "AES256", "aes128": "AES", "des56": "DES"}

# The article 万卡集群不是堆显卡而是重构算力交付的底层逻辑 §5 thresholds (action numbers are the article's) and the ones we assume [U].
TEMP_DERATE_C = 75  # action 7: above 75 °C the daemon derates the card
TEMP_THROTTLE_C = 85  # action 7: 910B throttles above 85 °C, losing ~40% performance
PFC_STORM_PER_S = 1000  # [U] sustained PFC pause frames per second on one NPU port
OPTICAL_RX_MIN_MW = 0.1  # [U] -10 dBm: below typical 200/400G receiver sensitivity margins
LEAF_PORTS_DOWN = 4  # NPU ports down under one leaf at once: suspect the leaf, not the cards
CDU_HOT_CARDS = 16  # cards over the derate temperature on one CDU at once: suspect the CDU


def _spine_group(s: NpuServer) -> str:
    """The server's pod (3 tiers), else the whole fabric above its leaves: the model's domain
    names, the same as the scheduler's HyperNodes (files/scheduler)."""
    domain = s.domain(DomainKind.POD) or s.domain(DomainKind.FABRIC)
    return domain.name if domain else ""


def npu_targets(cluster: Cluster) -> list[dict[str, Any]]:
    devices = cluster.device_by_name
    out = []
    for s in cluster.npu_servers:
        d = devices[s.name]
        address = d.mgmt.ip if d.mgmt else s.host_ip
        if not address:
            continue
        labels = {
            "host": s.name,
            "zone": cluster.rack_by_name[d.rack].zone,
            "rack": d.rack,
            "pod": _spine_group(s),
        }
        for kind in (DomainKind.LEAF, DomainKind.SUPERNODE, DomainKind.CDU):
            domain = s.domain(kind)
            if domain is not None:  # a multi-rail server's access unit is its group of leaves
                rails = kind == DomainKind.LEAF and len(s.leaves) > 1
                labels["rail_group" if rails else kind] = domain.name
        out.append({"targets": [f"{ip(address)}:{NPU_EXPORTER_PORT}"], "labels": labels})
    return out


def snmp_targets(cluster: Cluster) -> list[dict[str, Any]]:
    """Every switch on its management address (the model's: MEth, or the oob loopback)."""
    groups: dict[int | None, str] = {}  # pod index -> its name, or None -> the whole fabric's
    supernodes: dict[str, set[str]] = {}
    for s in cluster.npu_servers:
        sn = s.domain(DomainKind.SUPERNODE)
        for kind in (DomainKind.POD, DomainKind.FABRIC):
            domain = s.domain(kind)
            if domain is not None:
                groups[domain.index if kind == DomainKind.POD else None] = domain.name
        for leaf in s.leaves:
            supernodes.setdefault(leaf, set()).add(sn.name if sn else "")
    out = []
    for d in cluster.devices:
        if not d.is_switch or d.mgmt is None:
            continue
        labels = _switch_labels(cluster, d, groups, supernodes)
        out.append({"targets": [ip(d.mgmt.ip)], "labels": labels})
    return out


def _switch_labels(
    cluster: Cluster,
    d: Device,
    groups: Mapping[int | None, str],
    supernodes: Mapping[str, set[str]],
) -> dict:
    labels = {
        "switch": d.name,
        "role": d.role,
        "plane": d.plane,
        "model": d.model,
        "zone": cluster.rack_by_name[d.rack].zone,
        "rack": d.rack,
    }
    if d.role.is_lower:
        labels["leaf"] = d.name  # vocabulary: alert label
    if d.plane == Plane.PARAMETER and d.role in (Role.LEAF, Role.SPINE):
        pod = groups.get(d.pod or 0) or groups.get(None)
        if pod:
            labels["pod"] = pod  # vocabulary: alert label
    sn = supernodes.get(d.name, set())
    if len(sn) == 1 and min(sn):
        labels["supernode"] = min(sn)  # vocabulary: alert label
    return labels


def prometheus_config(cluster: Cluster) -> str:
    svc = cluster.services
    header = f"""\
# Prometheus configuration of {cluster.name}, generated by wanka; do not edit.
# Targets live in targets/*.json (file_sd) with their place in the fabric as labels (zone, rack,
# leaf, pod, supernode, cdu); this file does not grow with the cluster, and Prometheus picks up
# changed target files without a reload.
#
# npu-exporter: MindCluster NPU Exporter on every NPU server, binary deployment listening on the
#   server's in-band address, port {NPU_EXPORTER_PORT} (its default), plain HTTP as in MindCluster
#   6.0+ (5.x served HTTPS). Deployed as MindCluster's DaemonSet it listens on the container IP
#   instead: scrape it with kubernetes_sd_configs and take the labels from the node labels.
# snmp: every switch through snmp_exporter ({SNMP_EXPORTER}, next to Prometheus on the monitoring
#   nodes) with module {SNMP_MODULE} and SNMPv3 auth {SNMP_AUTH_NAME}, which snmp_exporter's snmp.yml
#   must define to match the switches' SNMPv3 user (files/switches/*.cfg):
#     auths:
#       {SNMP_AUTH_NAME}:
#         version: 3
#         username: {svc.snmp_user}
#         security_level: authPriv
#         auth_protocol: {AUTH_PROTOCOL.get(svc.snmp_auth, svc.snmp_auth)}
#         password: ${{SNMP_AUTH_KEY}}      # the vault's snmp auth key; --config.expand-environment-variables
#         priv_protocol: {PRIV_PROTOCOL.get(svc.snmp_priv, svc.snmp_priv)}       # [U] may need AES256C on CloudEngine
#         priv_password: ${{SNMP_PRIV_KEY}}
#   The switches are polled on their management (out-of-band) addresses.
"""
    config = {
        "global": {
            "scrape_interval": "30s",
            "scrape_timeout": "10s",
            "evaluation_interval": "30s",
            "external_labels": {
                "cluster": cluster.name,
                "site": cluster.site,
            },
        },
        "rule_files": ["rules/wanka.rules.yml"],
        "scrape_configs": [
            {
                "job_name": "npu-exporter",
                "scheme": "http",
                "metrics_path": "/metrics",
                "file_sd_configs": [{"files": ["targets/npu-exporter.json"]}],
            },
            {
                "job_name": "snmp",
                "scrape_interval": "60s",
                "scrape_timeout": "50s",
                "metrics_path": "/snmp",
                "params": {"module": [SNMP_MODULE], "auth": [SNMP_AUTH_NAME]},
                "file_sd_configs": [{"files": ["targets/snmp.json"]}],
                "relabel_configs": [
                    {"source_labels": ["__address__"], "target_label": "__param_target"},
                    {"source_labels": ["__param_target"], "target_label": "instance"},
                    {"target_label": "__address__", "replacement": SNMP_EXPORTER},
                ],
            },
            {"job_name": "snmp-exporter", "static_configs": [{"targets": [SNMP_EXPORTER]}]},
        ],
    }
    return header + yaml.safe_dump(config, sort_keys=False, default_flow_style=False, width=100)


WHERE_NPU = (
    "{{ $labels.host }} (rack {{ $labels.rack }}, leaf {{ $labels.leaf }}, {{ $labels.pod }}"
    "{{ if $labels.supernode }}, {{ $labels.supernode }}{{ end }}"
    "{{ if $labels.cdu }}, {{ $labels.cdu }}{{ end }})"
)
WHERE_SWITCH = (
    "{{ $labels.switch }} ({{ $labels.plane }} {{ $labels.role }}, rack {{ $labels.rack }}"
    "{{ if $labels.pod }}, {{ $labels.pod }}{{ end }}"
    "{{ if $labels.supernode }}, {{ $labels.supernode }}{{ end }})"
)
PORT = "port {{ $labels.ifName }} ({{ $labels.ifAlias }})"
CABLED = 'ifAlias=~"to .+|peer-link to .+"'  # the switch configs describe every cabled port


# Prometheus's own templates in the rules, given to the Jinja2 template as variables (never read
# by Jinja2 itself)
PROMETHEUS = {
    "id": "{{ $labels.id }}",
    "value": "{{ $value }}",
    "cdu": "{{ $labels.cdu }}",
    "pod": "{{ $labels.pod }}",
    "leaf_or_rail_group": "{{ if $labels.leaf }}leaf {{ $labels.leaf }}"
    "{{ else }}rail group {{ $labels.rail_group }}{{ end }}",  # a multi-rail server has no leaf
}


def rules_text() -> str:
    """files/monitoring/rules/wanka.rules.yml (templates/monitoring/wanka.rules.yml.j2)."""
    return render(
        "monitoring/wanka.rules.yml.j2",
        where_npu=WHERE_NPU,
        where_switch=WHERE_SWITCH,
        port=PORT,
        cabled="{" + CABLED + "}",
        temp_derate_c=TEMP_DERATE_C,
        temp_throttle_c=TEMP_THROTTLE_C,
        pfc_storm_per_s=PFC_STORM_PER_S,
        optical_rx_min_mw=OPTICAL_RX_MIN_MW,
        leaf_ports_down=LEAF_PORTS_DOWN,
        cdu_hot_cards=CDU_HOT_CARDS,
        **PROMETHEUS,
    )


def rules() -> dict[str, Any]:
    """The rules as Prometheus reads them."""
    return yaml.safe_load(rules_text())


def _json_lines(groups: list[dict[str, Any]]) -> bytes:
    """One target group per line: small git diffs when servers are added."""
    lines = [json.dumps(g, sort_keys=True, separators=(",", ":")) for g in groups]
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode() if lines else b"[]\n"


@emitter(late=True)
def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    yield OutputFile("files/monitoring/prometheus.yml", prometheus_config(cluster).encode())
    yield OutputFile("files/monitoring/rules/wanka.rules.yml", rules_text().encode())
    yield OutputFile(
        "files/monitoring/targets/npu-exporter.json", _json_lines(npu_targets(cluster))
    )
    yield OutputFile("files/monitoring/targets/snmp.json", _json_lines(snmp_targets(cluster)))
