"""The run's phases on the plots: from test.json's "phases" to labelled bands."""
from __future__ import annotations

from results.plots import LAYOUT, PhaseSpan, mark_phases, new_axes, phase_spans


def test_phase_spans_follow_test_json_and_skip_unplotted_phases():
    test_json = {"phases": [{"phase": "main", "time_s": 2.5}, {"phase": "heal", "time_s": 30.0},
                            {"phase": "recover", "time_s": 41.0}, {"phase": "final", "time_s": 50.0},
                            {"phase": "teardown", "time_s": 58.0}, {"phase": "check", "time_s": 60.0}]}
    assert phase_spans(test_json) == [PhaseSpan("setup", 0.0, 2.5), PhaseSpan("main", 2.5, 30.0),
                                      PhaseSpan("heal", 30.0, 41.0), PhaseSpan("recover", 41.0, 50.0),
                                      PhaseSpan("final", 50.0, 58.0)]



def test_the_clients_opening_before_the_clock_is_its_own_band():
    test_json = {"phases": [{"phase": "open", "time_s": 2.5}, {"phase": "main", "time_s": 4.0},
                            {"phase": "final", "time_s": 34.0}]}
    assert phase_spans(test_json) == [PhaseSpan("setup", 0.0, 2.5), PhaseSpan("open", 2.5, 4.0),
                                      PhaseSpan("main", 4.0, 34.0), PhaseSpan("final", 34.0, None)]


def test_no_or_malformed_phases_give_no_spans():
    assert phase_spans(None) == [] and phase_spans({}) == []
    assert phase_spans({"phases": [{"phase": "main"}, "x"]}) == []


def test_each_phase_is_labelled_and_its_start_marked():
    _, axes = new_axes("ops/s")
    spans = [PhaseSpan("setup", 0.0, 2.5), PhaseSpan("main", 2.5, 30.0), PhaseSpan("final", 30.0, None)]
    mark_phases(axes, spans, end_s=40.0)
    assert [t.get_text().strip() for t in axes.texts] == ["setup", "main", "final"]
    starts = sorted(line.get_xdata()[0] for line in axes.lines)
    assert starts == [2.5, 30.0]  # no line at 0: the plot's edge is the start
    (band,) = axes.patches  # every other phase is shaded: only "main" here
    assert band.get_x() == 2.5 and band.get_width() == 27.5


def test_labels_of_phases_a_moment_apart_do_not_overlap():
    # heal, recover and final within two seconds of a 60 s run, as after a short recovery
    spans = [PhaseSpan("setup", 0.0, 2.5), PhaseSpan("main", 2.5, 30.0), PhaseSpan("heal", 30.0, 30.8),
             PhaseSpan("recover", 30.8, 31.5), PhaseSpan("final", 31.5, None)]
    figure, axes = new_axes("ops/s")
    mark_phases(axes, spans, end_s=60.0)
    axes.set_xlim(0, 60.0)
    figure.subplots_adjust(**LAYOUT)  # as finish() lays every plot out
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(figure).get_renderer()
    boxes = [text.get_window_extent(renderer) for text in axes.texts]
    assert len(boxes) == 5
    overlapping = [(spans[i].name, spans[j].name) for i in range(5) for j in range(i + 1, 5)
                   if boxes[i].overlaps(boxes[j])]
    assert overlapping == []
    assert round(boxes[2].y0) == round(boxes[0].y0)  # setup and heal, far apart: one row, above
