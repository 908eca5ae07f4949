"""logtrial: results."""
