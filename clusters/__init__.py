"""logtrial: clusters."""
