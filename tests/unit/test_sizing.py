"""Sizing a cluster from a model (`wanka size`): the arithmetic of the article
十万亿参数的算力账先算到绝望 (README, Field articles) and a blueprint that generates."""

from __future__ import annotations

import io
import os
import re
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml

from generator import sizing
from generator.cli import main
from tests.support.examples import ROOT


def wanka(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`wanka ARGS` run in this process (generator.cli.main), in `cwd`, as a CompletedProcess."""
    out, err, before = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:  # argparse usage errors
                code = exit_.code if isinstance(exit_.code, int) else 2
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["wanka", *args], code, out.getvalue(), err.getvalue())


def test_seed_001_worked_example():
    """The article 十万亿参数的算力账先算到绝望 §4.1: 10^14 parameters x 10^13 tokens = 6 x 10^27 FLOPs; at 300 TFLOPS effective
    BF16 per card, 6 x 10^27 / (300 x 10^12) = 2 x 10^13 card-seconds. The seed then writes
    '大约23万卡日' and '30天训练窗口意味着需要大约7700张卡': 2 x 10^13 s / 86,400 s is 2.3 x 10^8
    card-days, not 2.3 x 10^5, so the window needs 7.7 million cards, not 7,700 (its §1.1
    'one year of 6,000 1-PFLOPS cards' is off the same way). The seed's digits are what a
    10^11-parameter model gives: 6 x 10^24 FLOPs -> 231,481 card-days -> 7,716 cards."""
    seed = sizing.size(params=1e14, tokens=1e13, days=30, mfu=0.5, card_tflops=600)
    assert seed.flops == pytest.approx(6e27)
    assert seed.effective == pytest.approx(300e12)  # 600 TFLOPS peak x MFU 0.5
    assert seed.card_seconds == pytest.approx(2e13)
    assert seed.card_days == pytest.approx(2.3148e8, rel=1e-4)
    assert seed.cards_for_work == pytest.approx(7_716_049, rel=1e-6)

    digits = sizing.size(params=1e11, tokens=1e13, days=30, mfu=0.5, card_tflops=600)
    assert digits.flops == pytest.approx(6e24)
    assert round(digits.card_days) == 231_481  # "大约23万卡日"
    assert round(digits.cards_for_work) == 7_716  # "大约7700张卡"
    # the seed plans 10,000-12,000 cards for it: x 1.3 overhead, whole leaves of 4 servers
    assert digits.cards_planned == 10_031 and digits.cards == 10_048
    assert 10_000 <= digits.cards <= 12_000

    year = sizing.size(params=1e14, tokens=1e13, days=365.25, mfu=1.0, card_tflops=1000)
    assert year.cards_for_work == pytest.approx(190_128, rel=1e-4)  # the seed says 6,000


def test_memory_floor_per_precision_matches_seed_001_section_1_2():
    """100 trillion parameters in BF16: 200 TB of weights, 200 TB of gradients, 200 TB for each
    Adam moment; FP32 doubles every figure."""
    tb = 1e12
    bf16 = sizing.memory_bytes(1e14, "bf16")
    assert bf16["weights"] == bf16["gradients"] == 200 * tb
    assert bf16["optimizer (Adam m, v)"] == 400 * tb
    fp32 = sizing.memory_bytes(1e14, "fp32")
    assert sum(fp32.values()) == 2 * sum(bf16.values()) == 1600 * tb
    assert sum(sizing.memory_bytes(1, "mixed").values()) == 16  # bf16 + fp32 master and moments
    s = sizing.size(params=1e14, tokens=1e13, days=30, mfu=0.5, card_tflops=600, hbm_gb=64)
    assert s.cards_for_memory == 12_500  # 800 TB / 64 GB


def test_rounds_up_to_whole_leaves_and_supernodes():
    a2 = sizing.size(params=1e10, tokens=1e12, days=30, mfu=0.5)
    assert a2.servers_per_leaf == 4 and a2.servers % 4 == 0
    assert a2.cards == a2.servers * 8 >= a2.cards_planned
    a3 = sizing.size(
        params=1e11,
        tokens=1e13,
        days=30,
        mfu=0.5,
        server="atlas-900-a3-superpod-node",
        supernode=48,
    )
    assert a3.servers_per_leaf == 2 and a3.unit == 48 and a3.servers % 48 == 0


def test_the_arithmetic_is_printed_step_by_step():
    res = wanka(
        "size", "--params", "1e14", "--tokens", "1e13", "--days", "30", "--mfu", "0.5",
        "--card-tflops", "600",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = res.stdout
    for text in (
        "6 x N x D = 6 x 1e+14 parameters x 1e+13 tokens = 6e+27 FLOPs",
        "600 TFLOPS (bf16) x MFU 0.5 = 300 TFLOPS effective",
        "= 2e+13 card-seconds",
        "weights 200 TB + gradients 200 TB + optimizer (Adam m, v) 400 TB = 800 TB",
        "whole leaves of 4 servers",
    ):
        assert text in out, text


def test_size_writes_a_blueprint_that_generates(tmp_path):
    bp = tmp_path / "blueprints" / "sized.yaml"
    res = wanka(
        "size", "--params", "1e10", "--tokens", "1e12", "--days", "30", "--mfu", "0.5",
        "--write", str(bp), "--name", "sized-demo",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    data = yaml.safe_load(bp.read_text())
    assert data["metadata"]["name"] == "sized-demo" and data["compute"]["cards"] == 224
    assert bp.read_text().startswith("# yaml-language-server: $schema=")
    out = tmp_path / "out"
    gen = wanka("generate", str(bp), "-o", str(out), "-q")
    assert gen.returncode == 0, gen.stderr
    assert (out / "files" / "cabling.csv").exists()
    assert (out / "files" / "failure-domains.md").exists()

    again = wanka(
        "size", "--params", "1e10", "--tokens", "2e12", "--days", "30", "--write", str(bp)
    )
    assert again.returncode == 2 and "exists" in again.stderr
    assert yaml.safe_load(bp.read_text())["compute"]["cards"] == 224  # untouched
    forced = wanka(
        "size", "--params", "1e10", "--tokens", "2e12", "--days", "30", "--write", str(bp),
        "--force",
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    assert yaml.safe_load(bp.read_text())["compute"]["cards"] > 224


@pytest.mark.slow
def test_seed_sized_blueprint_validates_at_10k_cards(tmp_path):
    bp = tmp_path / "seed.yaml"
    res = wanka(
        "size", "--params", "1e11", "--tokens", "1e13", "--days", "30", "--mfu", "0.5",
        "--card-tflops", "600", "--write", str(bp),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert yaml.safe_load(bp.read_text())["compute"]["cards"] == 10_048
    assert wanka("validate", str(bp)).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mfu", "1.5"], "--mfu"),
        (["--server", "atlas-800t-a9"], "unknown NPU server"),
        (["--overhead", "0.5"], "--overhead"),
    ],
)
def test_bad_requests_exit_2_with_the_reason(args, message):
    res = wanka("size", "--params", "1e10", "--tokens", "1e12", "--days", "30", *args)
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr


def _printed_models(out: str) -> dict[tuple[str, str], tuple[int, str]]:
    """(plane, role) -> (count, model) from the `switches` lines of `wanka size`."""
    found = {}
    for line in out.splitlines():
        if m := re.match(r"switches +(\w+) +\d tiers: ([\w-]+) leaves; (.*)$", line):
            plane = m.group(1)
            found[plane, "leaf"] = (0, m.group(2))
            for count, model, role in re.findall(r"(\d+) x ([\w-]+) \((\w+)\)", m.group(3)):
                found[plane, role] = (int(count), model)
    return found


@pytest.mark.parametrize(
    ("params", "tokens", "tflops"),
    [
        ("1e10", "1e12", "300"),  # 224 cards: every default holds
        ("1e11", "1e12", "300"),  # 1,024 cards
        pytest.param("1e11", "1e13", "600", marks=pytest.mark.slow),  # 10,048: a larger spine
    ],
)
def test_size_prints_the_models_the_generated_cluster_uses(tmp_path, params, tokens, tflops):
    """Issue #32 item 6: `wanka size` expands with the same code as `generate` (the schema
    defaults, then the model expand names for a plane they cannot hold), prints every switch
    model above the leaves with the ports it uses and has, and those are the models (and
    counts) of the cluster the written blueprint generates."""
    from generator import pipeline

    bp = tmp_path / "sized.yaml"
    res = wanka(
        "size", "--params", params, "--tokens", tokens, "--days", "30", "--mfu", "0.5",
        "--card-tflops", tflops, "--write", str(bp),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    printed = _printed_models(res.stdout)
    cluster = pipeline.run(bp, emit=False).cluster
    built: dict[tuple[str, str], tuple[int, str]] = {}
    for d in cluster.devices:
        role = "leaf" if d.role in ("leaf", "access") else d.role
        if d.plane in ("parameter", "storage", "business", "inband", "oob") and role in (
            "leaf",
            "spine",
            "core",
        ):
            count, _ = built.get((d.plane, role), (0, ""))
            built[d.plane, role] = (count + 1, d.model)
    assert {k: v[1] for k, v in printed.items()} == {k: v[1] for k, v in built.items()}
    assert all(printed[k][0] == built[k][0] for k in printed if k[1] != "leaf")
    if tflops == "600":  # the default business spine (64 x 100GE) cannot hold 10k cards
        assert "the default ce8850-64cq-ei has 64" in res.stdout
        assert (
            yaml.safe_load(bp.read_text())["networks"]["business"]["spine"]["model"]
            == (built["business", "spine"][1])
        )
    for line in res.stdout.splitlines():  # ports used never above ports had
        for used, had in re.findall(r"(\d+) ports used of (\d+)", line):
            assert int(used) <= int(had), line


@pytest.mark.slow  # sizes and validates 65,536 cards (about 25 s of CPU here)
def test_size_settles_ecmp_and_optic_reach_at_65536_cards(tmp_path):
    """Issue #32 item 6 at the benchmarks' scale: around 50,000 cards the default parameter
    spine (576 ports at 400GE, 288 of them up in three tiers) needs more equal-cost paths than
    its 128 (catalog ecmp_max), and the business uplinks of 16-rack rows run past their optics'
    reach. Both design checks name a value; `wanka size` sets them, prints why, and the written
    blueprint validates with no error."""
    bp = tmp_path / "sized.yaml"
    cards = 65536  # 1e12 parameters x D tokens in 30 days at the defaults (150 TFLOPS effective,
    # x 1.3 overhead), rounded up to whole leaves
    tokens = f"{cards * 30 * 86400 * 150e12 / 1.3 / 6e12:.6e}"
    res = wanka("size", "--params", "1e12", "--tokens", tokens, "--days", "30", "--write", str(bp))
    assert res.returncode == 0, res.stderr
    written = re.search(r"written \(([\d,]+) cards\)", res.stderr)
    assert written and cards <= int(written.group(1).replace(",", "")) < cards + 64, res.stderr
    data = yaml.safe_load(bp.read_text())
    assert data["networks"]["parameter"]["spine"]["model"] == "ce16804"  # 72 up, within 128
    assert data["zones"]["training"]["row"]["racks"] > 16
    assert "ce16804 (spine)" in res.stdout and "the default ce16816 has 576" in res.stdout
    assert wanka("validate", str(bp)).returncode == 0
