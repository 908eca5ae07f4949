"""The packet fault's pure parts: behaviours, the netem path's commands (this machine's
kernel has no netem, so they are checked as text here), and the holder's netlink codec."""
from __future__ import annotations

import random

from nemesis import packet_behaviour as behaviours
from nemesis import packet_holder as holder
from nemesis import packet_mechanisms as mechanisms
from nemesis.packet import draw_links, links_touching


def test_drawn_behaviours_are_seeded_and_a_reorder_comes_with_a_delay():
    drawn = [behaviours.plan_behaviour(random.Random(seed)) for seed in range(200)]
    assert drawn == [behaviours.plan_behaviour(random.Random(seed)) for seed in range(200)]
    assert all(b and set(b) <= set(behaviours.KNOBS) for b in drawn)
    assert all(b["delay_ms"] for b in drawn if "reorder_pct" in b)
    assert {k for b in drawn for k in b} == set(behaviours.KNOBS)


def test_netem_path_hangs_netem_under_one_htb_class_for_the_struck_hosts_only():
    behaviour = {"delay_ms": 50, "jitter_ms": 10, "loss_pct": 5.0, "reorder_pct": 25.0,
                 "rate_kbit": 1000}
    assert behaviours.netem_args(behaviour) == "delay 50ms 10ms loss 5.0% reorder 25.0%"
    script = mechanisms.qdisc_script("eth0", ["10.0.0.2", "10.0.0.3"], behaviour, netem=True)
    assert script.split(" && ") == [
        "tc qdisc add dev eth0 root handle 4c54: htb",
        "tc class add dev eth0 parent 4c54: classid 4c54:1 htb rate 1000kbit",
        "tc qdisc add dev eth0 parent 4c54:1 handle 4c55: netem delay 50ms 10ms loss 5.0% "
        "reorder 25.0%",
        "tc filter add dev eth0 parent 4c54: protocol ip prio 1 u32 match ip dst 10.0.0.2/32 "
        "flowid 4c54:1",
        "tc filter add dev eth0 parent 4c54: protocol ip prio 1 u32 match ip dst 10.0.0.3/32 "
        "flowid 4c54:1"]
    # the fallback keeps htb for the rate and leaves the rest to the holder
    assert "netem" not in mechanisms.qdisc_script("eth0", ["10.0.0.2"], behaviour, netem=False)
    assert behaviours.holder_args(behaviour) == "--delay-ms 50 --jitter-ms 10 --reorder 25.0"


def test_links_of_node_targets_and_drawn_links():
    assert links_touching(["n2"], ["n1", "n2", "n3"]) == [
        ["n1", "n2"], ["n2", "n1"], ["n2", "n3"], ["n3", "n2"]]
    for seed in range(50):
        links = draw_links(["n1", "n2", "n3"], random.Random(seed))
        assert 1 <= len(links) <= 3 and all(a != b for a, b in links)


def test_holder_codec_and_corruption():
    attrs = holder.attr(1, b"abc") + holder.attr(10, b"payload!")
    assert holder.parse_attrs(attrs) == {1: b"abc", 10: b"payload!"}
    message = holder.message(holder.NFQNL_MSG_VERDICT, holder.NLM_F_REQUEST, 7, attrs)
    ((kind, body),) = list(holder.messages(message))
    assert kind == (holder.NFNL_SUBSYS_QUEUE << 8) | holder.NFQNL_MSG_VERDICT
    assert holder.parse_attrs(body[4:]) == {1: b"abc", 10: b"payload!"}
    packet = bytes([0x45]) + bytes(19) + b"\x00" * 30  # a 20-byte IPv4 header, 30 bytes after
    flipped = holder.flip_one_bit(packet, random.Random(1))
    diff = [i for i in range(len(packet)) if packet[i] != flipped[i]]
    assert len(diff) == 1 and diff[0] >= 20 and bin(flipped[diff[0]]).count("1") == 1
