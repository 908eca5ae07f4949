"""docs/findings.md row 7 without tansu: librdkafka's consumers against a fake broker on
loopback (harness/probes/fake_fetch_broker.py). tansu's answer to a failed topic-id
lookup kills the client process; the same answer with the topic's own id, or without
the leader hint, does not: both ingredients are needed."""
from __future__ import annotations

import pytest

from harness.probes.fake_fetch_broker import ECHOED_ID, NO_HINT, TANSU
from harness.probes.fetch_crash import run_fake


def test_tansus_answer_kills_the_consumers_process_with_sigsegv(capsys):
    assert run_fake(TANSU, None) == 1
    assert capsys.readouterr().out.splitlines()[-1] == ("SEGFAULT: the consumers' process died of SIGSEGV after "
                                                        "the fake broker's answers to its fetches")


@pytest.mark.parametrize("answer", [ECHOED_ID, NO_HINT])
def test_an_answer_without_either_ingredient_leaves_the_consumers_alive(answer, capsys):
    assert run_fake(answer, None) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "ok: the consumers lived 5 s"
