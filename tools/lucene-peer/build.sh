#!/usr/bin/env bash
# Builds lucene-peer's runnable jar and prints its path. Needs Java 17+ and Maven; the first build
# downloads Lucene and the Maven plugins from Maven Central, later ones also work offline (mvn -o).
set -euo pipefail
cd "$(dirname "$0")"
# Maven 3.8 prints stray ANSI resets even with -q -B: keep stdout for the jar path alone.
mvn -q -B package -DskipTests "$@" >&2
echo "$PWD/target/lucene-peer.jar"
