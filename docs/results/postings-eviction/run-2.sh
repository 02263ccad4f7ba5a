#!/usr/bin/env bash
# The re-measurement of 2026-11-26: LRU, S3-FIFO and LIRS only (CLOCK shares no code with the
# result cache's policies), as run.sh otherwise: 5-50% of the postings file, hybrid-prefetch
# under a 64 MiB DRAM limit, TOP_10, 3 runs each, interleaved by policy.
B=${B:-/work/main/target/release/apcache-bench}
IDX=${IDX:-/var/tmp/rc-4parts}
$B workload $IDX --type and --class H --rp 0.25 --count 1000 --seed 1 -o and-H-rp25.txt >/dev/null 2>&1
$B workload $IDX --type single --class H --rp 0.25 --count 1000 --seed 1 -o single-H-rp25.txt >/dev/null 2>&1
echo "workload,cache_mib,policy,run,qps,mean_us,p99_us,miss_rate"
for w in and-H-rp25.txt single-H-rp25.txt /work/shared/queries/search-benchmark-game.queries.jsonl; do
  for mib in 4 8 20 41; do
    for run in 1 2 3; do
      for p in lru s3fifo lirs; do
        $B queries $IDX --queries $w -k 10 --warmup 1 --repeat 1 --mode hybrid-prefetch \
          --cache-size ${mib}MiB --tier-dir /dev/shm --eviction $p --memory-limit 64MiB --json 2>/dev/null |
        python3 -c "
import json,sys; d=json.load(sys.stdin); r=d['repetitions'][-1]
print('$(basename $w .txt)', $mib, '$p', $run, round(r['qps'],1), round(r['mean_us'],1), round(r['p99_us'],1), r['miss_rate'], sep=',')"
      done
    done
  done
done
