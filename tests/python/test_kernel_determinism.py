# tests/python/test_kernel_determinism.py — the generated kernels of a call are the same text in
# every process (the disk cache is keyed by that text: a kernel that differed from process to
# process would be compiled again by each). Loops and branches that carry several variables are
# where the order once followed heap addresses.
from conftest import run_python

CODE = r"""
import torch, shadegrad as sg
SOURCE = '''
[Differentiable]
float horner(float x, no_diff int n)
{
    float acc = 0.0; float power = 1.0; float bias = 0.5; int steps = 0;
    [MaxIters(8)]
    for (int i = 0; i < n; i++) {
        acc = acc + power * x; power = power * x; steps = steps + 1;
        if (acc > 10.0) { bias = bias * 0.5; acc = acc - bias; break; }
    }
    float out = 0.0;
    switch (steps) { case 1: out = acc; break; case 2: out = acc * 2.0; break; default: out = acc + bias; }
    return out + power;
}
'''
m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cpu), "determinism", SOURCE)
x = torch.rand(16, requires_grad=True)
print(m.horner.debug_code(x, 3))
"""


def test_generated_kernels_are_the_same_in_every_process():
    texts = []
    for _ in range(3):
        proc = run_python(CODE)
        assert proc.returncode == 0, proc.stderr
        texts.append(proc.stdout)
    assert "backward kernel" in texts[0]
    assert texts[0] == texts[1] == texts[2]
