#!/usr/bin/env bash
# The re-measurement of 2026-11-26: LRU, S3-FIFO and LIRS only (CLOCK shares no code with the
# result cache's policies), as run.sh otherwise: 5-50% of the postings file, hybrid-prefetch
# under a 64 MiB DRAM limit, TOP_10, 3 runs each, interleaved by policy.
IDX=${IDX:-/var/tmp/rc-4parts} POLICIES="lru s3fifo lirs" exec bash "$(dirname "$0")/run.sh"
