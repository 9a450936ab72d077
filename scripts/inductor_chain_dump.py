# scripts/inductor_chain_dump.py — prints the Triton code torch.compile generates for the bench's
# chain10 (forward and backward), to compare its math with shadegrad's generated kernels.
#   TORCH_LOGS=output_code python3 scripts/inductor_chain_dump.py
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/bench")
from bench_gpu import chain10_torch  # noqa: E402

x = (torch.rand(1 << 20, device="cuda") + 0.1).requires_grad_(True)
compiled = torch.compile(chain10_torch)
compiled(x).backward(torch.ones_like(x))
torch.cuda.synchronize()
print("done")
