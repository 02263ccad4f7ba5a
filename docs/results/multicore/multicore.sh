#!/usr/bin/env bash
# QPS against query threads over one shared postings cache (and one result cache), TOP_10,
# all four parts; each point: one unmeasured pass, three measured, the median reported.
B=${B:-/work/main/target/release/apcache-bench}
IDX=${IDX:-/var/tmp/apcache-4parts}
# and-H-rp50.txt: apcache-bench workload $IDX --type and --class H --rp 0.5 --count 2000 --seed 2 -o and-H-rp50.txt
echo "workload,mode,result_cache,threads,qps,mean_us,p99_us,miss_rate"
for w in /work/shared/queries/search-benchmark-game.queries.jsonl and-H-rp50.txt; do
  for mode in base hybrid-prefetch; do
    extra=""; [ $mode = hybrid-prefetch ] && extra="--tier-dir /dev/shm --memory-limit 64MiB"
    for rc in none 16MiB; do
      rcflag=""; [ $rc != none ] && rcflag="--result-cache-size $rc"
      for t in 1 2 4 8; do
        $B queries $IDX --queries $w -k 10 --threads $t --warmup 1 --repeat 3 --mode $mode $extra $rcflag --json 2>/dev/null |
        python3 -c "
import json,sys,statistics as st; d=json.load(sys.stdin); rs=d['repetitions']
m=sorted(rs,key=lambda r:r['qps'])[1]
print('$(basename $w .txt)','$mode','$rc',$t,round(m['qps'],1),round(m['mean_us'],1),round(m['p99_us'],1),m['miss_rate'],sep=',')"
      done
    done
  done
done
