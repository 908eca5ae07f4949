"""What every layer shares and no layer owns: exit codes, where client libraries
log, and JVM class-data-sharing archives. It imports nothing from the project."""
