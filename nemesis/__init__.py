"""logtrial: nemesis."""
