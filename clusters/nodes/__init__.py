"""The nodes, whatever runs on them: the inventory, SSH, local network namespaces,
clients pinned to nodes, daemons known by pid file, libfaketime, and the cluster lock."""
