#!/bin/bash
A=/work/main/target/release/apcache
O=/var/tmp/apx/results4
mkdir -p $O
W=/var/tmp/apx/w
for r in 1 2 3; do
  echo "=== speed rep $r"
  $A bench queries /var/tmp/apx/raw8 --queries $W/raw8-single-H-25.txt -k 1024 --warmup 1 --repeat 2 --mode base > $O/speed-base-$r.txt 2>&1
  grep -i "qps" $O/speed-base-$r.txt | head -3
  $A bench queries /var/tmp/apx/raw8 --queries $W/raw8-single-H-25.txt -k 1024 --warmup 1 --repeat 2 --mode hybrid-prefetch --cache-size 1200MiB --memory-limit 64MiB --metadata-dir /dev/shm --loader direct > $O/speed-hp-$r.txt 2>&1
  grep -i "qps" $O/speed-hp-$r.txt | head -3
done
for r in 1 2 3; do
  echo "=== cells rep $r"
  $A experiment apcache /var/tmp/apx/raw4 -o $O/single50-$r --queries 1000 --loader direct --sections cache,lookahead --workloads single-H-0.25 --cache-fractions 0.5 --sweep-fraction 0.5 --lookaheads 1,4,16,64 > $O/single50-$r.log 2>&1
  $A experiment apcache /var/tmp/apx/raw4 -o $O/and100-$r --queries 1000 --loader direct --sections cache,lookahead --workloads and-H-0.25 --cache-fractions 1.0 --sweep-fraction 1.0 --lookaheads 1,4,16,64 > $O/and100-$r.log 2>&1
done
echo ALL DONE
