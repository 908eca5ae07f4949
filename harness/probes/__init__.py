"""The findings' probes (docs/findings.md): each reproduces one finding on demand, with
as few moving parts as it can, and prints what it saw. `logtrial probe ...` runs them
(harness/commands/probe.py)."""
