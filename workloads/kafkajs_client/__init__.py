"""kafkajs (npm `kafkajs`) behind the workloads' client seam: a Node program (src/,
pinned by its package-lock.json) whose modules `npm ci` installs on first use into the
cache (install.py), one process per network namespace, driven over a pipe by the
bridge the Java and Go clients share (workloads/bridge/)."""
