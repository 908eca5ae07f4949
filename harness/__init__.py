"""logtrial harness: the test runner, the SSH control layer and the CLI."""
