#!/usr/bin/env bash
# Builds lucene-peer's runnable jar and prints its path. Needs Java 17+ and Maven; the first build
# downloads Lucene and the Maven plugins from Maven Central, later ones also work offline (mvn -o).
#   build.sh              Lucene 9.12 on the default Java: target/lucene-peer.jar
#   build.sh --lucene10   Lucene 10 on the Temurin 25 JDK ($JAVA25_HOME, default
#                         /usr/lib/jvm/temurin-25-jdk-amd64): target10/lucene10-peer.jar
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${1:-}" == "--lucene10" ]]; then
  shift
  export JAVA_HOME="${JAVA25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
  # Maven 3.8 prints stray ANSI resets even with -q -B: keep stdout for the jar path alone.
  mvn -q -B package -DskipTests -Dlucene.version=10.3.1 -Dmaven.compiler.release=21 \
    -Dpeer.name=lucene10-peer -Dpeer.build.dir="$PWD/target10" "$@" >&2
  echo "$PWD/target10/lucene10-peer.jar"
  exit 0
fi
mvn -q -B package -DskipTests "$@" >&2
echo "$PWD/target/lucene-peer.jar"
