#!/usr/bin/env python3
"""Export a PyTorch model as an ONNX Runtime training graph for memplan.

Runs torch.onnx.export in training mode, then onnxruntime-training's
generate_artifacts (loss, gradient graph, AdamW), and writes to OUT:
training_model.onnx (what memplan plans), eval_model.onnx, optimizer_model.onnx
and checkpoint.  Needs .venv-torch (scripts/setup-torch-venv.sh).

MODEL is MODULE:NAME, where MODULE is an importable module (mypkg.models) or a
.py file (path/to/net.py), and NAME a class or factory function in it, called
with --kwargs.  The model must return the logits (first output): (N, classes)
for --loss ce, with per-token / per-pixel logits flattened to (N*S, classes);
the labels may keep their natural shape ([batch, seq]): they are flattened too.

Tensor specs: NAME:DTYPE[DIMS], DIMS comma-separated sizes or symbol names;
symbols (batch, seq, ...) stay symbolic in the graph (bind them later with
memplan --dim).  Integer inputs that index tables take '<HIGH', the exclusive
upper bound of their values: 'ids:int64[batch,seq]<50257' (otherwise they are
0 while tracing).  Dtypes: float32 float16 float64 int64 int32 bool.

examples:
  .venv-torch/bin/python scripts/export-training-graph.py mypkg.models:MyNet \\
      --input 'x:float32[batch,3,32,32]' --label 'labels:int64[batch]' --loss ce --opset 15 -o out/
  .venv-torch/bin/python scripts/export-training-graph.py lm.py:TinyLM --kwargs '{"vocab": 1000}' \\
      --input 'ids:int64[batch,seq]<1000' --label 'labels:int64[batch,seq]<1000' -o out/

exit status: 0 written; 1 export or generate_artifacts failed; 2 bad arguments
(module not importable, name missing, bad spec or --kwargs).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import shlex
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "fixtures"))

PROG = "export-training-graph"


class UsageError(Exception):
    pass


def load_model_factory(target: str):
    if ":" not in target:
        raise UsageError(f"MODEL '{target}' must be MODULE:NAME, e.g. mypkg.models:MyNet or net.py:MyNet")
    mod_name, _, attr = target.rpartition(":")
    if not mod_name or not attr:
        raise UsageError(f"MODEL '{target}' must be MODULE:NAME, e.g. mypkg.models:MyNet or net.py:MyNet")
    if mod_name.endswith(".py") or os.sep in mod_name:
        path = os.path.abspath(mod_name)
        if not os.path.isfile(path):
            raise UsageError(f"cannot import '{mod_name}': no such file")
        sys.path.insert(0, os.path.dirname(path))
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # noqa: BLE001 - any error while importing the user's file
            raise UsageError(f"cannot import '{mod_name}': {type(e).__name__}: {e}") from e
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(mod_name)
        except Exception as e:  # noqa: BLE001
            raise UsageError(f"cannot import module '{mod_name}': {type(e).__name__}: {e}") from e
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"module '{mod_name}' has no '{attr}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"'{target}' is not a class or function")
    return obj


def parse_dims(items) -> dict:
    out = {}
    for it in items or []:
        name, sep, value = it.partition("=")
        if not sep or not name.isidentifier() or not value.isdigit() or int(value) <= 0:
            raise UsageError(f"--dim '{it}': expected NAME=VALUE with a positive VALUE, e.g. --dim batch=8")
        out[name] = int(value)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", metavar="MODEL", help="MODULE:NAME of the nn.Module class or factory")
    ap.add_argument("--input", action="append", required=True, metavar="SPEC",
                    help="a model input, in forward() argument order (repeat for several)")
    ap.add_argument("--label", metavar="SPEC",
                    help="the labels graph input (default for --loss ce: 'labels:int64[batch]', values "
                         "below the logits' last dim)")
    ap.add_argument("--loss", choices=["ce", "bce"], default="ce",
                    help="ce: cross-entropy on (N, classes) logits and int labels (default); "
                         "bce: BCEWithLogits, float labels shaped like the logits")
    ap.add_argument("--opset", type=int, default=15,
                    help="ONNX opset for torch.onnx.export (default 15; 13-16 work with ORT 1.19; at 17 "
                         "torch's one-output LayerNormalization is rejected)")
    ap.add_argument("--kwargs", default="{}", metavar="JSON", help="constructor keyword arguments as a JSON object")
    ap.add_argument("--dim", action="append", metavar="NAME=VALUE",
                    help="size of a symbolic dim while tracing (default batch=2, seq=8, others 3)")
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="output folder (created if missing)")
    ap.add_argument("--seed", type=int, default=0, help="torch.manual_seed before building the model (default 0)")
    ap.add_argument("--check", action="store_true",
                    help="afterwards run one training step of training_model.onnx in ONNX Runtime (CPU)")
    ap.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and ORT's log")
    args = ap.parse_args(argv)

    try:
        import torch_export as tx
    except ImportError as e:
        print(f"{PROG}: {e} (run scripts/setup-torch-venv.sh and use .venv-torch/bin/python)", file=sys.stderr)
        return 2
    try:
        inputs = [tx.parse_spec(s) for s in args.input]
        if args.label:
            label = tx.parse_spec(args.label)
        elif args.loss == "ce":
            label = tx.parse_spec("labels:int64[batch]")
        else:
            raise UsageError("--loss bce needs --label, e.g. 'labels:float32[batch,1]' (the logits' shape)")
        try:
            kwargs = json.loads(args.kwargs)
        except json.JSONDecodeError as e:
            raise UsageError(f"--kwargs is not valid JSON: {e}") from e
        if not isinstance(kwargs, dict):
            raise UsageError("--kwargs must be a JSON object, e.g. '{\"num_classes\": 10}'")
        dims = parse_dims(args.dim)
        factory = load_model_factory(args.model)
        import torch

        torch.manual_seed(args.seed)
        try:
            model = factory(**kwargs)
        except TypeError as e:
            raise UsageError(f"{args.model}(**{kwargs}) failed: {e}") from e
        if not isinstance(model, torch.nn.Module):
            raise UsageError(f"{args.model}(...) returned {type(model).__name__}, not a torch.nn.Module")
    except (UsageError, tx.SpecError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2

    out = os.path.abspath(args.out)
    try:
        info = tx.export_training(model, inputs, label, args.loss, args.opset, out, dims=dims, seed=args.seed,
                                  log_path="/dev/stderr" if args.verbose else None)
    except tx.SpecError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - one line, traceback with --verbose
        if args.verbose:
            traceback.print_exc()
        print(f"{PROG}: export failed: {tx.first_line(e)}" + ("" if args.verbose else " (--verbose for details)"),
              file=sys.stderr)
        return 1

    rel = args.out.rstrip("/") or "/"
    print(f"wrote {rel}/training_model.onnx, eval_model.onnx, optimizer_model.onnx, checkpoint")
    print(f"  {len(info['trainable'])} trainable + {len(info['frozen'])} frozen parameters "
          f"({info['params']:,} elements), opset {args.opset}, inputs: "
          + ", ".join(str(s) for s in info["inputs"] + [info["label"]]))
    if args.check:
        highs = {s.name: s.high for s in info["inputs"] + [info["label"]] if s.is_int}
        names = [s.name for s in info["inputs"] + [info["label"]]]
        unit = [info["label"].name] if args.loss == "bce" else []
        try:
            loss = tx.run_one_step_isolated(os.path.join(out, "training_model.onnx"), info["dims"], highs,
                                            names, unit, seed=args.seed)
            print(f"  check: one ONNX Runtime training step ran, loss {loss:.4f}")
        except Exception as e:  # noqa: BLE001
            print(f"{PROG}: check failed: {tx.first_line(e)}", file=sys.stderr)
            return 1
    memplan = os.path.join(REPO, "build", "cli", "memplan")
    if not os.path.exists(memplan):
        memplan = "memplan"
    elif os.path.abspath(os.getcwd()) == REPO:
        memplan = os.path.relpath(memplan)
    dim_args = " ".join(f"--dim {d}={v}" for d, v in info["dims"].items())
    print("next (bind the dims to the sizes you train with):")
    print(f"  {memplan} inspect {shlex.quote(rel + '/training_model.onnx')} {dim_args}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
