from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.checkers import test_queue_property as qp
from tests.checkers import test_queue_engines as qe


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(qe.histories, min_size=4, max_size=4), st.integers(0, 11))
def test_engines_soak(spark, tmp_path_factory, batch, seed):
    qe.test_engines_agree_on_random_histories.hypothesis.inner_test(spark, tmp_path_factory, batch, seed)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(qp.action, min_size=5, max_size=25), min_size=4, max_size=4))
def test_spark_reference_soak(spark, tmp_path_factory, histories):
    qp.test_spark_checker_agrees_with_reference.hypothesis.inner_test(spark, tmp_path_factory, histories)
