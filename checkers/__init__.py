"""logtrial: checkers."""
