# tests/python/test_kernel_index.py — a first call in a fresh process whose kernels are in the disk
# cache runs neither the front end nor codegen: the kernel index (src/call/kernel_index.h) keys the
# compiled module by what its code is made from, known before either runs. Anything the code
# depends on — the source, an imported file, a define, a dtype, the call's rank, a codegen flag,
# the compiler — changes the key, so such a call compiles. Counted with _core._compile_stats() in
# child processes (each its own process: the index is for later processes), on the CPU backend.
import json
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    r'''
    import json, sys
    import torch
    import shadegrad as sg
    from shadegrad import _core

    lib_dir, steps = sys.argv[1], json.loads(sys.argv[2])
    source = """
    import helper;
    [Differentiable]
    T f<T : IFloat>(T a, T b) { return helper_scale(a) * b + T(OFFSET); }
    """
    results = {}
    for step in steps:
        src = source + step.get("extra_source", "")
        dev = sg.create_torch_device(type=sg.DeviceType.cpu, include_paths=[lib_dir])
        options = {"defines": {"OFFSET": step.get("offset", "1.0")}}
        m = sg.Module.load_from_source(dev, "indexed", src, options=options)
        fn = m.f
        if step.get("fast_math"):
            fn = fn.fast_math()
        if step.get("deterministic"):
            fn = fn.deterministic()
        dtype = torch.float64 if step.get("double") else torch.float32
        shape = (3, 4) if step.get("rank2") else (5,)
        a = (torch.rand(shape, dtype=dtype) + 0.5).requires_grad_()
        b = torch.rand(shape, dtype=dtype) + 0.5
        before = _core._compile_stats()
        y = fn(a, b)
        y.sum().backward()
        after = _core._compile_stats()
        scale = float(step.get("scale", "2.0"))
        offset = float(step.get("offset", "1.0"))
        assert torch.allclose(y, scale * a.detach() * b + offset), step
        assert torch.allclose(a.grad, scale * b), step
        results[step["name"]] = {k: after[k] - before[k] for k in after if k != "ms"}
    print(json.dumps(results))
    '''
)

HELPER = "[Differentiable]\nT helper_scale<T : IFloat>(T x) {{ return T({scale}) * x; }}\n"


def run(tmp_path, steps, env_extra=None):
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=str(tmp_path / "cache"))
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "lib"), json.dumps(steps)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_helper(tmp_path, scale):
    (tmp_path / "lib").mkdir(exist_ok=True)
    (tmp_path / "lib" / "helper.slang").write_text(HELPER.format(scale=scale))


def compiled(stats):
    return stats["front_end_runs"] > 0 and stats["codegen_runs"] > 0 and stats["index_misses"] > 0


def test_warm_first_call_runs_neither_front_end_nor_codegen(tmp_path):
    write_helper(tmp_path, "2.0")
    cold = run(tmp_path, [{"name": "base"}])["base"]
    # The forward and the backward kernel: each generated, compiled by the host compiler, indexed.
    assert cold["front_end_runs"] == 2 and cold["codegen_runs"] == 2, cold
    assert cold["index_misses"] == 2 and cold["compiles"] == 2, cold
    warm = run(tmp_path, [{"name": "base"}])["base"]
    assert warm["plans"] == 1, warm
    assert warm["index_hits"] == 2 and warm["index_misses"] == 0, warm
    assert warm["front_end_runs"] == 0 and warm["codegen_runs"] == 0, warm
    assert warm["compiles"] == 0 and warm["disk_hits"] == 2, warm


def test_every_input_of_the_code_is_in_the_key(tmp_path):
    write_helper(tmp_path, "2.0")
    run(tmp_path, [{"name": "base"}])
    variants = [
        {"name": "source", "extra_source": "\n// a comment changes the text\n"},
        {"name": "define", "offset": "3.0"},
        {"name": "dtype", "double": True},
        {"name": "rank", "rank2": True},
        {"name": "fast_math", "fast_math": True},
        {"name": "deterministic", "deterministic": True},
    ]
    got = run(tmp_path, [{"name": "base"}] + variants)
    assert got["base"]["front_end_runs"] == 0 and got["base"]["index_hits"] == 2, got["base"]
    for v in variants:
        assert compiled(got[v["name"]]), (v["name"], got[v["name"]])

    # An imported file's text: the same module source, another helper.
    write_helper(tmp_path, "4.0")
    got = run(tmp_path, [{"name": "import", "scale": "4.0"}])["import"]
    assert compiled(got), got
    # The compiler: another command (here the same compiler with an extra word) is another key.
    write_helper(tmp_path, "2.0")
    got = run(tmp_path, [{"name": "compiler"}], {"SHADEGRAD_CXX": "c++ -O2"})["compiler"]
    assert compiled(got), got
    # And back to the first setup: every variant above left the base entries alone.
    got = run(tmp_path, [{"name": "base"}])["base"]
    assert got["front_end_runs"] == 0 and got["index_hits"] == 2, got


def test_damaged_index_entry_is_rebuilt(tmp_path):
    write_helper(tmp_path, "2.0")
    run(tmp_path, [{"name": "base"}])
    index = tmp_path / "cache" / "index"
    entries = sorted(index.rglob("*.bin"))
    assert len(entries) == 2
    for path in entries:  # the payload hash no longer matches: the entry is dropped, never trusted
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))
    got = run(tmp_path, [{"name": "base"}])["base"]
    assert compiled(got) and got["compiles"] == 0, got  # the modules themselves were still cached
    got = run(tmp_path, [{"name": "base"}])["base"]
    assert got["front_end_runs"] == 0 and got["index_hits"] == 2, got


def test_debug_code_of_an_indexed_kernel_shows_its_code(tmp_path):
    write_helper(tmp_path, "2.0")
    run(tmp_path, [{"name": "base"}])
    script = textwrap.dedent(
        r'''
        import sys, torch, shadegrad as sg
        from shadegrad import _core
        dev = sg.create_torch_device(type=sg.DeviceType.cpu, include_paths=[sys.argv[1]])
        src = """
        import helper;
        [Differentiable]
        T f<T : IFloat>(T a, T b) { return helper_scale(a) * b + T(OFFSET); }
        """
        m = sg.Module.load_from_source(dev, "indexed", src, options={"defines": {"OFFSET": "1.0"}})
        a = (torch.rand(5) + 0.5).requires_grad_()
        b = torch.rand(5)
        m.f(a, b).sum().backward()
        assert _core._compile_stats()["front_end_runs"] == 0
        print(m.f.debug_code(a, b))
        '''
    )
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "lib")], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "---- forward kernel" in proc.stdout and "---- backward kernel" in proc.stdout
    assert "sg_kernel" in proc.stdout or "extern \"C\"" in proc.stdout, proc.stdout[-2000:]


COOP_CHILD = textwrap.dedent(
    r'''
    import json, sys
    import torch
    import shadegrad.slangtorch as slangtorch
    from shadegrad import _core

    m = slangtorch.loadModuleFromSource("""
    [Differentiable]
    [CUDAKernel]
    void cube(DiffTensorView<float> x, DiffTensorView<float> y)
    {
        uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
        if (i >= x.size(0)) return;
        float v = x.load(i);
        y.store(i, v * v * v);
    }
    """, moduleName="indexed_coop")
    x = torch.linspace(-1.0, 2.0, 40)
    y = torch.zeros(40)
    gx, gy = torch.zeros(40), torch.ones(40)
    before = _core._compile_stats()
    m.cube(x, y).launchRaw(blockSize=(16, 1, 1), gridSize=(3, 1, 1))
    m.cube.bwd((x, gx), (y, gy)).launchRaw(blockSize=(16, 1, 1), gridSize=(3, 1, 1))
    after = _core._compile_stats()
    assert torch.allclose(y, x ** 3), "forward"
    assert torch.allclose(gx, 3 * x * x), "gradient"
    print(json.dumps({k: after[k] - before[k] for k in after if k != "ms"}))
    '''
)


def test_warm_cooperative_backward_reads_its_gradient_views_from_the_index(tmp_path):
    # A DiffTensorView's gradient record (its layout's grad_view) comes back from the index: a
    # warm backward launch writes the gradient as the cold one does.
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", COOP_CHILD], capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["codegen_runs"] >= 2, cold
    assert warm["codegen_runs"] == 0 and warm["front_end_runs"] == 0, warm
