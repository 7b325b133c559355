#!/usr/bin/env bash
# A few GRPO steps with audio on one GPU; prints the time of each step and the peak GPU memory (< 10 min).
#
#   bash training/gpu_check.sh                         # tiny random Qwen2.5-Omni thinker, built here (no download)
#   MODEL=/models/Qwen2.5-Omni-7B bash training/gpu_check.sh   # a real checkpoint (add LORA=64 to fit one GPU)
#
# Environment: STEPS (default 4), K (completions per state, default 8), MAX_NEW (default 256), LORA (rank, 0 = full),
# PYTHON (default .venv/bin/python, else python3), OUT_DIR (default a fresh temp dir), ALLOW_CPU=1 (measure on CPU
# when there is no GPU: float32, peak resident memory instead of GPU memory). Needs the train and speech extras:
# pip install -e ".[train,speech]". Writes OUT_DIR/gpu_check.json with the figures it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
OUT_DIR=${OUT_DIR:-$(mktemp -d -t hear2act-gpu-check-XXXX)}
export STEPS=${STEPS:-4} K=${K:-8} MAX_NEW=${MAX_NEW:-256} LORA=${LORA:-0} MODEL=${MODEL:-} ALLOW_CPU=${ALLOW_CPU:-0} OUT_DIR
export PYTHONPATH="$PWD:$PWD/tests${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

"$PY" - <<'EOF'
import json
import os
import time

import resource

import torch

gpu = torch.cuda.is_available()
if not gpu and os.environ["ALLOW_CPU"] != "1":
    raise SystemExit("gpu_check.sh needs a CUDA GPU (torch.cuda.is_available() is False); ALLOW_CPU=1 runs on CPU")
out = os.environ["OUT_DIR"]
model = os.environ["MODEL"]
if not model:
    from hear2act.agents.llm.tiny import build_tiny_omni

    model = str(build_tiny_omni(os.path.join(out, "tiny-omni")))
k, steps = int(os.environ["K"]), int(os.environ["STEPS"])

from hear2act.training.grpo import main

if gpu:
    torch.cuda.reset_peak_memory_stats()
start = time.perf_counter()
summary = main([
    "--model", model, "--access", "A+T", "--max_steps", str(steps), "--output_dir", os.path.join(out, "run"),
    "--n_scenarios", "4", "--states_per_episode", "2", "--num_generations", str(k),
    "--per_device_train_batch_size", str(k), "--global_batch", str(k),
    "--max_completion_length", os.environ["MAX_NEW"], "--bf16", str(gpu).lower(), "--beta", "0.04",
    "--lora_r", os.environ["LORA"], "--gradient_checkpointing", str(gpu).lower(),
])
figures = {
    "device": torch.cuda.get_device_name(0) if gpu else f"cpu ({torch.get_num_threads()} threads)",
    "model": model, "steps": summary["steps"], "K": k, "max_new_tokens": int(os.environ["MAX_NEW"]),
    "step_time_s": [round(t, 3) for t in summary["step_time_s"]],
    "steady_step_time_s": round(sum(summary["step_time_s"][1:]) / max(1, len(summary["step_time_s"]) - 1), 3),
    "peak_gpu_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 3) if gpu else None,
    "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3),
    "wall_s": round(time.perf_counter() - start, 1), "reward_terms": summary["reward_terms"],
}
with open(os.path.join(out, "gpu_check.json"), "w") as f:
    json.dump(figures, f, indent=1)
print(json.dumps(figures, indent=1))
EOF
