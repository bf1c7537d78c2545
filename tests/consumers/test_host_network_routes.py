"""The in-band keyfile (roles/host_network) routes what the host's in-band port must reach: the
management nodes also the out-of-band pool (SSH and SNMP to every switch's management address,
Redfish to the BMCs, through the firewalls), the NPU servers only the in-band pool. Rendered by
the real ansible-playbook from the generated pod-128 inventory, the inputs checked against the
role's argument_specs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.structured_yaml import FastVariablesLoader
from tests.support.ansible_run import play_locally

pytestmark = pytest.mark.slow  # one real ansible-playbook run

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "pod-128"
ROLE = ROOT / "roles" / "host_network"

PLAY = """
- name: Render the in-band keyfile as roles/host_network writes it
  hosts: controller-01,npu-001
  gather_facts: false
  tasks:
    - name: Check the inputs against the role's argument_specs
      ansible.builtin.validate_argument_spec:
        argument_spec: "{{ specs.argument_specs.main.options }}"
        provided_arguments:
          inband_address: "{{ inband_address }}"
          inband_gateway: "{{ inband_gateway }}"
          inband_routes: "{{ inband_routes }}"
          pools: "{{ pools }}"
    - name: Render the keyfile
      ansible.builtin.template:
        src: "{{ role }}/templates/inband.nmconnection.j2"
        dest: "{{ out }}/{{ inventory_hostname }}.nmconnection"
        mode: "0600"
      vars:
        host_network_interfaces: {}
"""


def _routes(keyfile: str) -> list[str]:
    return [line for line in keyfile.splitlines() if line.startswith("route")]


def test_management_nodes_route_the_out_of_band_pool_npu_servers_only_in_band(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY)
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())
    extra = {"role": str(ROLE), "out": str(tmp_path), "specs": specs}
    res = play_locally(INVENTORY, tmp_path / "play.yml", tmp_path, extra)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    pools = yaml.load((INVENTORY / "group_vars" / "all.yml").read_text(), FastVariablesLoader)[
        "pools"
    ]
    controller = (tmp_path / "controller-01.nmconnection").read_text()
    gateway = "10.101.0.129"  # controller-01's in-band gateway (host_vars)
    assert _routes(controller) == [
        f"route1={pools['inband']},{gateway}",
        f"route2={pools['oob']},{gateway}",
    ]
    assert "never-default=true" in controller.splitlines()  # still no default route
    npu = (tmp_path / "npu-001.nmconnection").read_text()
    assert _routes(npu) == [f"route1={pools['inband']},10.101.0.1"]
