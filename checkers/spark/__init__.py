"""The SparkSession the checkers run on (session) and its class-data-sharing
archive (archive)."""
