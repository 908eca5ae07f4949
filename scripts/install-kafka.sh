#!/usr/bin/env bash
# Assembles Kafka's jars from Maven Central into a cache outside the repo.
# Idempotent: a complete cache (marked by .complete holding the pom's sha256) is left alone.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pom="$here/clusters/kafka/pom.xml"
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
cache="${LOGTRIAL_CACHE:-$HOME/.cache/logtrial}/kafka-$version"
# the marker holds the pom's checksum, so editing the pom re-assembles the cache
want=$(sha256sum "$pom" | cut -d' ' -f1)
if [ -f "$cache/.complete" ] && [ "$(cat "$cache/.complete")" = "$want" ]; then
  echo "kafka $version: cached in $cache"
  exit 0
fi
echo "kafka $version: assembling from Maven Central into $cache"
# assemble beside the cache and swap it in, so brokers already running keep their jars
mkdir -p "$cache"
fresh="$cache/libs.new.$$"
rm -rf "$fresh"
mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$fresh" -DincludeScope=runtime
rm -rf "$cache/libs.old"
[ -d "$cache/libs" ] && mv "$cache/libs" "$cache/libs.old"
mv "$fresh" "$cache/libs"
rm -rf "$cache/libs.old"
echo "$want" > "$cache/.complete"
echo "kafka $version: ready"
