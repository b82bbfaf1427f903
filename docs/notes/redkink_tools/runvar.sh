#!/bin/bash
# usage: runvar.sh VARIANT_DIR TAG N MODELS...
d=$1; tag=$2; n=$3; shift 3
cd $d
for m in "$@"; do
  PYTHONPATH=$d ECOCC_CACHE_DIR=/tmp/cache-redkink-$tag NUMBA_CACHE_DIR=/tmp/numba-redkink-$tag /work/venv/bin/python /tmp/redkink-tools/vmap2.py $m $n /tmp/redkink-$tag-$m-$n.npz
done
