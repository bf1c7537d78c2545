"""Generated files held against each other, for every cluster a reviewer could ask for.

One sweep per session generates the committed small examples, a few hand-written shapes and
`max_examples` blueprints drawn by tests/support/blueprint_strategies.py (200 under the `ci`
Hypothesis profile), and runs every property of tests/support/cross_output_properties.py on each
cluster's files. Each property is then one test below, failing with the smallest cluster that breaks
it. The pipeline runs once per cluster, not once per property: that is what keeps 200 clusters
cheap.

Each of the six disagreements of issue #12 has a property here; all hold.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings

from generator.errors import BlueprintError
from tests.support.blueprint_strategies import run_pipeline, valid_blueprints
from tests.support.cross_output_properties import PROPERTIES
from tests.support.examples import EXAMPLES, LARGE_EXAMPLES, TINY, generated
from tests.support.output_readers import Outputs
from tests.support.profiles import PROFILE, max_examples

# dev: 3 drawn; the committed examples and HANDWRITTEN hold every shape the coverage test asks for
DRAWN = max_examples(200, 3)

# Shapes the random draw may miss in a short `dev` run, so every property sees them there too.
HANDWRITTEN = {
    "ospf, 3 tiers, ops-only management, no M-LAG": """\
apiVersion: wanka/v1
kind: Cluster
metadata: {name: ospf-three-tier}
compute: {server: atlas-800t-a2, servers: 24}
zones:
  management: {nodes: {ops: 2}}
  storage: {nodes: {count: 2}}
networks:
  parameter:
    spine: {model: ce9860-4c-ei}
    core: {model: ce9860-4c-ei}
    tiers: 3
    routing: {protocol: ospf}
  business: {leaf: {mlag: false}}
""",
    "jumbo NIC MTU 9400 (the switch MTU and jumbo frame follow it)": TINY
    + "networks:\n  parameter:\n    lossless: {mtu: 9400}\n",
}


@dataclass
class Sweep:
    clusters: int = 0
    drawn: int = 0
    seconds: float = 0.0
    invalid: list[str] = field(default_factory=list)
    failures: dict[str, tuple[int, str, list[str]]] = field(default_factory=dict)
    shapes: Counter = field(default_factory=Counter)

    def check(self, label: str, result) -> None:
        cluster = result.cluster
        size = len(cluster.npu_servers)
        fabric = cluster.fabric("parameter")
        bp = result.blueprint
        self.shapes.update(
            {
                f"tiers={fabric.tiers if fabric else 0}",
                f"rail={bp['networks']['parameter']['rail']}",
                f"routing={bp['networks']['parameter']['routing']['protocol']}",
                f"mlag={bp['networks']['business']['leaf']['mlag']}",
                f"supernodes={any(s.supernode is not None for s in cluster.npu_servers)}",
                f"monitoring_node={'monitoring' in bp['zones']['management']['nodes']}",
            }
        )
        outputs = Outputs({f.path: f.data for f in result.files})
        for name, prop in PROPERTIES.items():
            try:
                problems = prop(outputs, result)
            except Exception as err:  # a reader that cannot read an output is a finding too
                problems = [f"{type(err).__name__}: {err}"]
            if problems and (name not in self.failures or size < self.failures[name][0]):
                self.failures[name] = (size, label, problems)
        self.clusters += 1


@pytest.fixture(scope="module")
def sweep() -> Sweep:
    s = Sweep()
    start = time.process_time()
    for name in EXAMPLES:
        if name not in LARGE_EXAMPLES:
            s.check(f"blueprints/{name}", generated(name))
    for label, text in HANDWRITTEN.items():
        s.check(f"{label}:\n{text}", run_pipeline(text))

    @settings(max_examples=DRAWN, database=None)
    @given(valid_blueprints())
    def draw(drawn) -> None:
        try:
            result = run_pipeline(drawn.text)
        except BlueprintError as err:
            s.invalid.append(f"{drawn!r}\n{err.render()}")
            return
        errors = [f.line() for f in result.findings if f.severity == "error"]
        if errors:
            s.invalid.append(f"{drawn!r}\n" + "\n".join(errors))
            return
        s.drawn += 1
        s.check(repr(drawn), result)

    draw()
    s.seconds = time.process_time() - start
    return s


def _holds(sweep: Sweep, name: str) -> None:
    if name in sweep.failures:
        size, label, problems = sweep.failures[name]
        pytest.fail(
            f"{name}: broken by {size}-server cluster {label}\n" + "\n".join(problems),
            pytrace=False,
        )


def test_the_strategy_draws_only_blueprints_that_generate(sweep):
    assert sweep.invalid == [], sweep.invalid[:3]


def test_the_sweep_covers_every_shape_and_the_profile_count(sweep):
    print(
        f"\ncross-output sweep ({PROFILE}): {sweep.clusters} clusters "
        f"({sweep.drawn} drawn), {sweep.seconds:.1f} s CPU"
    )
    assert sweep.drawn >= DRAWN
    wanted = {
        "tiers=2", "tiers=3", "rail=single", "rail=multi", "routing=bgp", "routing=ospf",
        "mlag=True", "mlag=False", "supernodes=True", "supernodes=False",
        "monitoring_node=True", "monitoring_node=False",
    }  # fmt: skip
    assert wanted <= set(sweep.shapes), sorted(wanted - set(sweep.shapes))


def test_ip_plan_addresses_are_configured_on_the_named_device_and_interface(sweep):
    _holds(sweep, "addresses_are_configured_where_the_ip_plan_says")


def test_gateway_rows_of_the_ip_plan_name_one_cabled_device(sweep):
    _holds(sweep, "gateway_rows_name_one_cabled_device")


def test_gateways_are_configured_on_the_device_and_interface_the_ip_plan_names(sweep):
    _holds(sweep, "gateways_are_configured_where_the_ip_plan_says")


def test_devices_named_in_configs_inventory_scheduler_monitoring_and_failures_are_cabled(sweep):
    _holds(sweep, "devices_named_in_outputs_are_cabled")


def test_devices_named_in_the_ip_plan_are_cabled(sweep):
    _holds(sweep, "ip_plan_devices_are_cabled")


def test_cables_and_racks_of_the_failure_report_are_in_the_cabling_plan(sweep):
    _holds(sweep, "failure_units_exist")


def test_bom_counts_every_cabled_device(sweep):
    _holds(sweep, "bom_counts_the_cabled_devices")


def test_outputs_group_servers_into_the_same_leaves_pods_supernodes_racks_and_cdus(sweep):
    _holds(sweep, "domains_group_servers_alike")


def test_each_domain_has_one_name_in_every_output(sweep):
    _holds(sweep, "domain_names_are_spelled_alike")


def test_every_host_a_playbook_targets_has_a_management_ansible_host(sweep):
    _holds(sweep, "playbook_targets_have_a_reachable_ansible_host")


def test_every_switch_is_reachable_provisioned_and_in_one_rollout_batch(sweep):
    _holds(sweep, "switches_are_reachable_provisioned_and_rolled_out_once")


def test_ospf_clusters_carry_no_bgp_asn_in_the_inventory(sweep):
    _holds(sweep, "ospf_inventory_has_no_bgp_asn")


def test_ospf_clusters_have_no_bgp_block_in_parameter_switch_configs(sweep):
    _holds(sweep, "ospf_configs_have_no_bgp_block")


def test_ntp_and_syslog_servers_of_the_inventory_are_the_switches(sweep):
    _holds(sweep, "services_agree_between_inventory_and_switches")


def test_rank_ids_agree_between_rank_table_placement_and_diff(sweep):
    _holds(sweep, "rank_ids_agree")


def test_accelerator_labels_and_rank_table_count_the_same_devices(sweep):
    _holds(sweep, "device_counts_agree_between_labels_and_rank_table")


def test_every_output_counts_the_same_npu_cards(sweep):
    """Issue #32 item 4: the review, failure report, inventory, scheduler, rank table and BOM
    agree on the cards, on A3 supernodes (two dies a card) too."""
    _holds(sweep, "card_counts_agree")


def test_parameter_leaves_carry_the_mtu_of_the_npu_nics_cabled_to_them(sweep):
    _holds(sweep, "switches_carry_the_nic_mtu")
