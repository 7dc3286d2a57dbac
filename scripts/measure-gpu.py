#!/usr/bin/env python3
"""Measure the kernels of an MoE training job on your GPU and write an mfabric calibration.

Times each op the compute model has (docs/calibration.md, "Measured kernels") at the shapes of a
model and parallelism, with CUDA events after warm-up, and writes a calibration file whose
`kernels.measurements` mfabric fits when it loads it:

    python3 scripts/measure-gpu.py --model mixtral-8x22b --tp 8 --ep 8 --micro-batch 8 \\
        --seq 4096 --gpu H100 --out my-h100.yaml
    mfabric kernel expert --gpu h100 --hidden 6144 --ffn 2048 --tokens-per-expert 4096 \\
        --calibration my-h100.yaml
    mfabric compare --calibration my-h100.yaml ...

Expert FFNs are timed at several token counts around the job's average (a skewed router gives
some GPUs more), so that the fitted table covers the skew; the attention core, the QKV and output
projections and the router at the job's tokens; the MoE permutation; a fused Adam step; a copy.
Runs outside the build (PyTorch is not one of mfabric's dependencies); `--device cpu` runs the
same logic slowly on small shapes (the project's test does that, where python3-torch is
installed).
"""

import argparse
import datetime
import os
import platform
import sys
import time

try:
    import torch
except ImportError:  # the caller (or the test) says what to install
    sys.exit("measure-gpu.py: PyTorch is not installed (Debian: apt-get install python3-torch)")
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


def load_model(name_or_path):
    path = name_or_path
    if not os.path.exists(path):
        path = os.path.join(HERE, "..", "data", "models", name_or_path + ".yaml")
    if not os.path.exists(path):
        sys.exit(f"measure-gpu.py: --model: no model '{name_or_path}' (data/models/ or a YAML file)")
    with open(path) as f:
        return yaml.safe_load(f)


class Timer:
    """Mean time of fn() over `repeat` runs after `warmup`, in seconds."""

    def __init__(self, device, warmup, repeat):
        self.device, self.warmup, self.repeat = device, warmup, repeat

    def __call__(self, fn):
        for _ in range(self.warmup):
            fn()
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(self.repeat):
                fn()
            end.record()
            torch.cuda.synchronize()
            return start.elapsed_time(end) / 1e3 / self.repeat
        t0 = time.perf_counter()
        for _ in range(self.repeat):
            fn()
        return (time.perf_counter() - t0) / self.repeat


def fwd_and_fwd_bwd(timer, forward, inputs):
    """Forward alone, and forward + backward of sum(output), each timed."""

    def fwd():
        with torch.no_grad():
            forward()

    def fwd_bwd():
        for x in inputs:
            x.grad = None
        forward().float().sum().backward()

    return timer(fwd), timer(fwd_bwd)


def expert_loop(timer, dev, dtype, h, f, local, tokens, gated):
    x = [torch.randn(tokens, h, device=dev, dtype=dtype, requires_grad=True) for _ in range(local)]
    w13 = [(torch.randn(h, (2 if gated else 1) * f, device=dev, dtype=dtype) * 0.02).requires_grad_()
           for _ in range(local)]
    w2 = [(torch.randn(f, h, device=dev, dtype=dtype) * 0.02).requires_grad_() for _ in range(local)]

    def forward():
        outs = []
        for e in range(local):  # a loop of experts, as the model times it
            hidden = x[e] @ w13[e]
            if gated:
                gate, up = hidden.chunk(2, dim=-1)
                hidden = torch.nn.functional.silu(gate) * up
            else:
                hidden = torch.nn.functional.silu(hidden)
            outs.append(hidden @ w2[e])
        return torch.cat(outs)

    return fwd_and_fwd_bwd(timer, forward, x + w13 + w2)


def dense(timer, dev, dtype, n_in, n_out, tokens):
    x = torch.randn(tokens, n_in, device=dev, dtype=dtype, requires_grad=True)
    w = (torch.randn(n_in, n_out, device=dev, dtype=dtype) * 0.02).requires_grad_()
    return fwd_and_fwd_bwd(timer, lambda: x @ w, [x, w])


def attention(timer, dev, dtype, heads, kv_heads, dqk, dv, seq, batch):
    q = torch.randn(batch, heads, seq, dqk, device=dev, dtype=dtype, requires_grad=True)
    k = torch.randn(batch, heads, seq, dqk, device=dev, dtype=dtype, requires_grad=True)
    v = torch.randn(batch, heads, seq, dv, device=dev, dtype=dtype, requires_grad=True)
    # Key/value heads are shared by groups of query heads (GQA); the kernel reads them per query
    # head, as flash kernels do after expanding them, so the work is the query heads'.
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is None:  # PyTorch before 2.0 (Debian 12's 1.13): the unfused causal attention
        mask = torch.ones(seq, seq, device=dev, dtype=torch.bool).triu(1)

        def sdpa(q, k, v, is_causal):
            scores = (q @ k.transpose(-2, -1)) / dqk**0.5
            return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v

    return fwd_and_fwd_bwd(timer, lambda: sdpa(q, k, v, is_causal=True), [q, k, v])


def permute(timer, dev, dtype, h, tokens, top_k, experts):
    x = torch.randn(tokens, h, device=dev, dtype=dtype)
    logits = torch.randn(tokens, experts, device=dev, dtype=torch.float32)

    def run():
        weights, chosen = torch.topk(logits.softmax(-1), top_k, dim=-1)
        order = torch.argsort(chosen.flatten())
        routed = x.index_select(0, order // top_k)  # gather into expert order
        back = torch.zeros_like(x)
        scaled = routed * weights.flatten()[order].unsqueeze(-1).to(dtype)
        back.index_add_(0, order // top_k, scaled)  # the weighted scatter back
        return back

    with torch.no_grad():
        return timer(run)


def adam(timer, dev, params):
    p = torch.zeros(params, device=dev, dtype=torch.float32, requires_grad=True)
    p.grad = torch.randn_like(p)
    fused = dev.type == "cuda"
    opt = torch.optim.Adam([p], lr=1e-4, **({"fused": True} if fused else {}))
    return timer(opt.step)


def copy(timer, dev, nbytes):
    src = torch.empty(nbytes, device=dev, dtype=torch.uint8)
    dst = torch.empty_like(src)
    return timer(lambda: dst.copy_(src))


def seconds(s):
    return f"{s * 1e6:.3f}us"


def measure(args):
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit("measure-gpu.py: no CUDA GPU here (--device cpu runs the logic on the CPU)")
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    timer = Timer(dev, args.warmup, args.repeat)
    m = load_model(args.model)
    att = m["attention"]
    h, tp, ep = m["hidden"], args.tp, args.ep
    experts, top_k = m["experts"], m["top_k"]
    if experts % ep:
        sys.exit(f"measure-gpu.py: --ep: {experts} experts do not split over EP {ep}")
    local = experts // ep
    tokens = args.micro_batch * args.seq
    f = max(1, m["ffn_expert"] // tp)
    gated = m.get("gated_ffn", True)
    # Each expert's average tokens in the job: every EP rank routes `tokens` x top-k pairs over
    # the experts of the EP group.
    average = max(1, tokens * top_k * ep // experts)
    rows = []

    def row(op, group, fwd, fwd_bwd=None, **shape):
        r = {"op": op, "group": group, **shape, "forward": seconds(fwd)}
        if fwd_bwd is not None and fwd_bwd > fwd:
            r["forward_backward"] = seconds(fwd_bwd)
        rows.append(r)
        print(f"  {op:10} {group:36} {r['forward']:>14} {r.get('forward_backward', '-'):>14}",
              file=sys.stderr)

    name = m["name"]
    for t in sorted({max(1, average // 8), max(1, average // 2), average, average * 2}):
        fw, fb = expert_loop(timer, dev, dtype, h, f, local, t, gated)
        row("expert", f"{name} h{h} f{f} x{local}", fw, fb, hidden=h, ffn=f, local_experts=local,
            tokens=t, gated=gated)
    heads = max(1, att["heads"] // tp)
    if att.get("kind") == "mla":
        dqk = att["qk_nope_head_dim"] + att["qk_rope_head_dim"]
        dv, kv = att["v_head_dim"], heads
    else:
        dqk = dv = att.get("head_dim", h // att["heads"])
        kv = max(1, att.get("kv_heads", att["heads"]) // tp)
        for group, n_in, n_out in ((f"{name}/tp{tp} qkv", h, (heads + 2 * kv) * dqk),
                                   (f"{name}/tp{tp} o", heads * dqk, h)):
            fw, fb = dense(timer, dev, dtype, n_in, n_out, tokens)
            row("dense", group, fw, fb, **{"in": n_in, "out": n_out, "tokens": tokens})
    fw, fb = dense(timer, dev, dtype, h, experts, tokens)
    row("dense", f"{name} router", fw, fb, **{"in": h, "out": experts, "tokens": tokens})
    fw, fb = attention(timer, dev, dtype, heads, kv, dqk, dv, args.seq, args.micro_batch)
    row("attention", f"{name}/tp{tp} attention", fw, fb, heads=heads, kv_heads=kv, head_dim=dqk,
        v_head_dim=dv, seq=args.seq, batch=args.micro_batch, causal=True)
    hs = max(1, h // tp)
    row("permute", f"{name} permute h{hs}", permute(timer, dev, dtype, hs, tokens, top_k, experts),
        hidden=hs, tokens=tokens, top_k=top_k, experts=experts)
    row("optimizer", "adam", adam(timer, dev, args.optimizer_params),
        params=args.optimizer_params, bytes_per_param=28)
    row("elementwise", "copy", copy(timer, dev, args.copy_bytes), bytes=f"{2 * args.copy_bytes}B")
    return rows


def device_name(dev):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return platform.processor() or platform.machine()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="a model of data/models/ or a model YAML file")
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--ep", type=int, default=1)
    p.add_argument("--micro-batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--gpu", required=True,
                   help="the GPU's name in mfabric's catalogue (A100, H100, H800, H200, B200)")
    p.add_argument("--name", default=None, help="the calibration's name (default: the file's)")
    p.add_argument("--out", required=True, help="the calibration file to write")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (slow; for tests)")
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--optimizer-params", type=int, default=10**8)
    p.add_argument("--copy-bytes", type=int, default=1 << 30)
    args = p.parse_args()
    for flag in ("tp", "ep", "micro_batch", "seq", "warmup", "repeat", "optimizer_params",
                 "copy_bytes"):
        if getattr(args, flag) < 1:
            sys.exit(f"measure-gpu.py: --{flag.replace('_', '-')}: expected a positive integer")
    torch.manual_seed(0)
    print(f"measuring {args.model} TP {args.tp} EP {args.ep} on {args.device} ...", file=sys.stderr)
    rows = measure(args)
    dev = torch.device(args.device)
    name = args.name or os.path.splitext(os.path.basename(args.out))[0]
    today = datetime.date.today().isoformat()
    cuda = torch.version.cuda or "none"
    provenance = (f"measured by scripts/measure-gpu.py on {device_name(dev)} ({args.device}), "
                  f"PyTorch {torch.__version__}, CUDA {cuda}, {args.dtype}, {today}: "
                  f"{' '.join(sys.argv[1:])}")
    doc = {
        "name": name,
        "description": f"Kernel times of {args.model} (TP {args.tp}, EP {args.ep}, micro-batch "
                       f"{args.micro_batch}, seq {args.seq}) {provenance}; fitted by mfabric when "
                       "loaded (docs/calibration.md, \"Measured kernels\").",
        "gpu": args.gpu,
        "kernels": {"measured_on": args.gpu, "source": provenance, "measurements": rows},
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {provenance}\n")
        yaml.safe_dump(doc, f, sort_keys=False, width=100)
    os.replace(tmp, args.out)
    print(f"wrote {args.out} ({len(rows)} measurements)", file=sys.stderr)


if __name__ == "__main__":
    main()
