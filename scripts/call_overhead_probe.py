# scripts/call_overhead_probe.py — where the host time of a cached call goes, piece by piece, on
# one device: the call itself, a non-differentiable twin, under no_grad, the call key alone
# (describing the arguments), torch's allocation and torch.mul beside it. Host µs per call, min of
# rounds.   python3 scripts/call_overhead_probe.py [cuda|cpu]
import sys
import time

import torch

import shadegrad as sg

dev_name = sys.argv[1] if len(sys.argv) > 1 else "cuda"
dev = sg.create_device(sg.DeviceType.cuda if dev_name == "cuda" else sg.DeviceType.cpu)
m = sg.Module.load_from_source(dev, "probe", """
[Differentiable] float mul(float a, float b) { return a * b; }
float muln(float a, float b) { return a * b; }
void nothing(float a) { }
""")
a = torch.rand(64, device=dev_name)
b = torch.rand(64, device=dev_name)
out = torch.empty(64, device=dev_name)


def per_call(fn, *args, n=20000, rounds=9):
    for _ in range(3000):
        fn(*args)
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn(*args)
        best = min(best, (time.perf_counter_ns() - t0) / n / 1000)
    if dev_name == "cuda":
        torch.cuda.synchronize()
    return best


rows = [
    ("torch.mul(a, b)", per_call(torch.mul, a, b)),
    ("torch.mul(a, b, out=)", per_call(lambda x, y: torch.mul(x, y, out=out), a, b)),
    ("torch.empty(64)", per_call(lambda: torch.empty(64, device=dev_name))),
    ("sg mul(a, b) [Differentiable]", per_call(m.mul, a, b)),
    ("sg muln(a, b)", per_call(m.muln, a, b)),
    ("sg mul(a, b, _result=out)", per_call(lambda x, y: m.mul(x, y, _result=out), a, b)),
    ("sg nothing(a) (launch, no result)", per_call(m.nothing, a)),
    ("sg mul.call_key(a, b) (describe + key)", per_call(m.mul.call_key, a, b, n=5000)),
]
with torch.no_grad():
    rows.append(("sg mul(a, b) under no_grad", per_call(m.mul, a, b)))
for name, us in rows:
    print(f"{us:8.2f} us  {name}")
