"""One module per `logtrial` subcommand."""
