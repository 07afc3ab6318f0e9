#!/bin/bash
# ReSSL with --radius-k 5 (a new cluster whose inherited radius is 0 gets HDSSL's
# radius estimate) and without (the spec's default), seeds 0, 2000, 4000, one process
# at a time; a run whose last seed's record exists is skipped.
# From the repository root: bash benchmarks/results/ressl_radius/run_all.sh
set -u
out=benchmarks/results/ressl_radius
export TGS_DATA_ROOT=${TGS_DATA_ROOT:-/work/shared/data} OMP_NUM_THREADS=1
for run in radius_k5:Shuttle:0.01 radius_k5:GSAD:0.01 radius_k5:Shopper:0.01 \
           radius_k5:Shopper:0.001 radius_k5:GSAD:0.001 radius_k5:Shuttle:0.001 \
           default:Shopper:0.01 default:Shopper:0.001 default:GSAD:0.01 default:GSAD:0.001 \
           default:Shuttle:0.01 default:Shuttle:0.001; do
  IFS=: read -r variant dataset ratio <<< "$run"
  file=$out/ressl_${variant}_${dataset}_${ratio}.json
  [ -e "${file%.json}_seed4000.json" ] && continue
  extra=()
  [ "$variant" = radius_k5 ] && extra=(--radius-k 5)
  echo "$(date +%T) $file"
  python -m torch_geometric_stream run --model ressl --dataset "$dataset" \
    --label-ratio "$ratio" --seed 0,2000,4000 --threads 1 "${extra[@]}" \
    --output "$file" > "${file%.json}.log" 2>&1 || echo "FAILED $file"
done
