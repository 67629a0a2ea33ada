#!/usr/bin/env bash
# On the device: the campaigns of scripts/device/campaign.sh for the ops in OPS (LU with the
# recovery copy), everything packed into $OUT/camp.tar.gz (the device returns <= 8 files).
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT/camp"
OUT=$OUT/camp LU_ARGS="--lu-recovery on" BUDGET_S=${BUDGET_S:-400} bash scripts/device/campaign.sh 2>&1 |
  grep -vE "^\s*$" | grep -vE "^(by site|checksum |after|encode |mid |outcomes|trials:)" | tail -60
rm -f "$OUT"/camp/*.txt
gzip -f "$OUT"/camp/*.json
tar -czf "$OUT/camp.tar.gz" -C "$OUT" camp && rm -rf "$OUT/camp"
