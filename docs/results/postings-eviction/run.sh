#!/usr/bin/env bash
# The postings cache's eviction policies against LRU: miss rate, QPS, p99 at 5-50% of the
# postings file (81.6 MiB), hybrid-prefetch under a 64 MiB DRAM limit, TOP_10, 3 runs each.
# POLICIES picks the policies (default: all four); run-2.sh is the re-measurement.
B=${B:-/work/main/target/release/apcache-bench}
IDX=${IDX:-/var/tmp/apcache-4parts}
POLICIES=${POLICIES:-lru clock s3fifo lirs}
# The workloads, made once.
for type in and single; do
  [ -f $type-H-rp25.txt ] ||
    $B workload $IDX --type $type --class H --rp 0.25 --count 1000 --seed 1 -o $type-H-rp25.txt >/dev/null 2>&1
done
echo "workload,cache_mib,policy,run,qps,mean_us,p99_us,miss_rate"
for w in and-H-rp25.txt single-H-rp25.txt /work/shared/queries/search-benchmark-game.queries.jsonl; do
  for mib in 4 8 20 41; do
    for run in 1 2 3; do
      for p in $POLICIES; do
        $B queries $IDX --queries $w -k 10 --warmup 1 --repeat 1 --mode hybrid-prefetch \
          --cache-size ${mib}MiB --tier-dir /dev/shm --eviction $p --memory-limit 64MiB --json 2>/dev/null |
        python3 -c "
import json,sys; d=json.load(sys.stdin); r=d['repetitions'][-1]
print('$(basename $w .txt)', $mib, '$p', $run, round(r['qps'],1), round(r['mean_us'],1), round(r['p99_us'],1), r['miss_rate'], sep=',')"
      done
    done
  done
done
