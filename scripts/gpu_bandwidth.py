#!/usr/bin/env python3
"""Pinned host<->device copy rates on this machine's GPU, for scripts/gpu-check.sh.

Measures host->device alone, device->host alone, then both at once on two
streams (the runtime's swap_in and swap_out streams), each the median of a few
timed copies after a warm-up, and the launch floor (the time per kernel of a
long run of one-element kernels on one stream), and compares them with a
memplan device preset (`memplan devices --json`). Writes the figures as JSON,
which `memplan devices --calibrate` turns into a costs file. Uses PyTorch's CUDA
streams and pinned allocations, which the GPU machines here have; exits 3
("nothing measured") where there is no PyTorch or no GPU.

  gpu_bandwidth.py --preset-json devices.json --device h200-141gb -o bandwidth.json
"""
import argparse
import json
import statistics
import sys


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset-json", help="`memplan devices --json` output, to compare with")
    p.add_argument("--device", default="h200-141gb", help="preset name in --preset-json")
    p.add_argument("--mib", type=int, default=1024, help="bytes per copy, in MiB")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("-o", "--output", required=True, help="JSON file to write")
    return p.parse_args()


def timed(torch, copies, repeats):
    """Median seconds of running `copies` (callables taking a stream) at once."""
    streams = [torch.cuda.Stream() for _ in copies]
    times = []
    for i in range(repeats + 1):  # the first is the warm-up
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for copy, stream in zip(copies, streams):
            stream.wait_event(start)
            with torch.cuda.stream(stream):
                copy()
        for stream in streams:
            torch.cuda.current_stream().wait_stream(stream)
        end.record()
        end.synchronize()
        if i:
            times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def measure(torch, nbytes, repeats):
    host_a = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    host_b = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    dev_a = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dev_b = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    h2d = lambda: dev_a.copy_(host_a, non_blocking=True)  # noqa: E731
    d2h = lambda: host_b.copy_(dev_b, non_blocking=True)  # noqa: E731
    t_h2d = timed(torch, [h2d], repeats)
    t_d2h = timed(torch, [d2h], repeats)
    t_both = timed(torch, [h2d, d2h], repeats)
    return {
        "bytes_per_copy": nbytes,
        "h2d_bytes_per_s": nbytes / t_h2d,
        "d2h_bytes_per_s": nbytes / t_d2h,
        "both_at_once": {"h2d_and_d2h_seconds": t_both, "bytes_per_s_each": nbytes / t_both},
    }


def launch_seconds(torch, kernels=2000, repeats=5):
    """Median seconds per kernel of `kernels` back-to-back one-element adds:
    what a kernel too small to matter still costs (launch and dispatch)."""
    x = torch.zeros(1, device="cuda")
    times = []
    for i in range(repeats + 1):  # the first is the warm-up
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(kernels):
            x.add_(1)
        end.record()
        end.synchronize()
        if i:
            times.append(start.elapsed_time(end) / 1e3 / kernels)
    return statistics.median(times)


def preset(path, name):
    if not path:
        return None
    with open(path) as f:
        for d in json.load(f)["devices"]:
            if d["name"] == name:
                return d
    return None


def main():
    args = parse_args()
    try:
        import torch
    except ImportError:
        print("gpu_bandwidth: no PyTorch here; nothing measured")
        return 3
    if not torch.cuda.is_available():
        print("gpu_bandwidth: PyTorch sees no GPU; nothing measured")
        return 3
    result = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}
    result.update(measure(torch, args.mib << 20, args.repeats))
    result["launch_seconds"] = launch_seconds(torch)
    p = preset(args.preset_json, args.device)
    if p:
        result["preset"] = {k: p[k] for k in ("name", "h2d_bytes_per_s", "d2h_bytes_per_s")}
        result["measured_over_preset"] = {
            "h2d": result["h2d_bytes_per_s"] / p["h2d_bytes_per_s"],
            "d2h": result["d2h_bytes_per_s"] / p["d2h_bytes_per_s"],
        }
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)
    both = result["both_at_once"]["bytes_per_s_each"]
    line = (f"gpu_bandwidth: {result['gpu']}: pinned H2D {result['h2d_bytes_per_s'] / 1e9:.1f} GB/s, "
            f"D2H {result['d2h_bytes_per_s'] / 1e9:.1f} GB/s, both at once {both / 1e9:.1f} GB/s each, "
            f"launch {result['launch_seconds'] * 1e6:.1f} us")
    if p:
        line += (f"; preset {p['name']}: H2D {p['h2d_bytes_per_s'] / 1e9:.1f}, "
                 f"D2H {p['d2h_bytes_per_s'] / 1e9:.1f} GB/s")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
