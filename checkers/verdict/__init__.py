"""From findings to a verdict: every anomaly type declared once (taxonomy), the
consistency models that forbid them (consistency), and the one verdict function."""
