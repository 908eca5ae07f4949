"""The "Unseen messages" plot ends where the checker does: sends first read by
the final reads, inside the series' last time bucket, are drawn as read at
the end of the history (it was drawn from sample to sample, so their drop
was a slope one bucket wide against the plot's right edge, and the plot
seemed to end with them unseen)."""
from __future__ import annotations

import numpy as np

from checkers.history.read import read_history
from checkers.queue.local import check_queue_local
from results.plots import END_TAIL, draw_unseen, new_axes, unseen, unseen_caption, unseen_series, unseen_steps
from results.timeline import read_timeline
from tests.checkers.test_queue_unseen_series import final_reads_history


def checked(tmp_path, never_read: bool):
    """results.json and the report's timeline of test_queue_unseen_series' history."""
    h, _ = final_reads_history(never_read)
    path = h.write(tmp_path / "history.jsonl")
    return check_queue_local(read_history(path, "queue").ops), read_timeline(path)


def drawn_after(axes, x: float) -> float:
    """The top of what the plot's bands draw after `x`."""
    return max(v[:, 1][v[:, 0] > x].max() for c in axes.collections for v in (c.get_paths()[0].vertices,))


def test_steps_hold_each_bucket_and_the_end_past_the_history():
    seconds = np.array([1.0, 2.0, 3.0, 4.0])
    x, ys = unseen_steps(seconds, {"3": np.array([1.0, 2.0, 2.0, 0.0])}, end_s=3.9)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 4.0 + 4.0 * END_TAIL]
    assert ys["3"].tolist() == [1.0, 2.0, 2.0, 0.0, 0.0, 0.0]


def test_the_final_reads_take_the_plot_to_0_as_the_checker(tmp_path):
    results, timeline = checked(tmp_path, never_read=False)
    seconds, counts = unseen_series(results)
    assert counts["3"][-2:].tolist() == [2.0, 0.0]      # the final read, in the last bucket
    x, ys = unseen_steps(seconds, counts, timeline.end_s)
    _, axes = new_axes("unseen messages")
    draw_unseen(axes, x, ys)
    end = x[-2]
    assert end == seconds[-1] and (x[-1] - end) / x[-1] > 0.03   # a tail one can see
    assert drawn_after(axes, seconds[-2]) == 0.0         # the last bucket and the tail: nothing unseen
    assert drawn_after(axes, seconds[-3]) == 2.0
    assert [t.get_text() for t in axes.texts] == [" end: 0"]
    assert unseen(results, timeline).caption.endswith("when the history ended: 0, the checker's unseen count.")


def test_a_send_never_read_stays_on_the_plot_to_the_end(tmp_path):
    results, timeline = checked(tmp_path, never_read=True)
    x, ys = unseen_steps(*unseen_series(results), timeline.end_s)
    _, axes = new_axes("unseen messages")
    draw_unseen(axes, x, ys)
    assert drawn_after(axes, x[-2]) == 1.0 and [t.get_text() for t in axes.texts] == [" end: 1"]
    assert results["anomalies"]["unseen"]["count"] == 1
    assert unseen(results, timeline).caption.endswith("when the history ended: 1, the checker's unseen count.")


def test_the_caption_says_when_the_keys_shown_hold_fewer_than_the_checker_counts():
    assert unseen_caption(3, 25).endswith("ended: 3 on the keys shown, of the checker's 25 unseen on every key.")
    assert unseen_caption(2, None).endswith("ended: 2.")
