# tests/python/test_docs.py — the examples of docs/getting_started.md run as written and do what
# the text says they do.
import re

import torch

from conftest import REPO


def test_getting_started_examples_run():
    text = (REPO / "docs" / "getting_started.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    scope = {}
    exec(compile("\n".join(blocks), "docs/getting_started.md", "exec"), scope)
    x = scope["x"]
    torch.testing.assert_close(x.grad, 1 - torch.tanh(x.detach() / 2) ** 2)
    assert scope["out"].shape == (32, 48)
    assert scope["image"].grad is not None and scope["image"].grad.abs().sum() > 0
    source, target, m = scope["source"], scope["target"], scope["m"]
    start = (source - target).square().mean()
    final = (m.tone(source, scope["gain"], scope["bias"]) - target).square().mean()
    assert final < 0.5 * start, (float(start), float(final))
