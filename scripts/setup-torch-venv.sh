#!/usr/bin/env bash
# Makes .venv-torch for the PyTorch fixture zoo and scripts/export-training-graph.py;
# safe to run again (does nothing when .venv-torch already matches the pins).
#   scripts/setup-torch-venv.sh
# PyTorch itself comes from Debian (python3-torch 1.13.1, python3-torchvision 0.14.1,
# installed here when missing); the venv sees it through --system-site-packages and
# adds the pinned packages of scripts/requirements-torch.txt on top.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(python3 python3-venv python3-torch python3-torchvision)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup-torch-venv: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x .venv-torch/bin/python ] || ! cmp -s scripts/requirements-torch.txt .venv-torch/.requirements; then
  echo "setup-torch-venv: setting up .venv-torch from scripts/requirements-torch.txt"
  /usr/bin/python3 -m venv --system-site-packages .venv-torch
  .venv-torch/bin/pip install -q --disable-pip-version-check -r scripts/requirements-torch.txt
  cp scripts/requirements-torch.txt .venv-torch/.requirements
fi
.venv-torch/bin/python -c 'import torch, torchvision, onnx, onnxruntime.training.artifacts' 2>/dev/null \
  || { echo "setup-torch-venv: .venv-torch cannot import torch/onnx/onnxruntime.training" >&2; exit 1; }
echo "setup-torch-venv: ok ($(.venv-torch/bin/python -c 'import torch, onnxruntime; print("torch", torch.__version__, "onnxruntime", onnxruntime.__version__)' 2>/dev/null))"
