# tests/python/test_slangpy_container_examples.py — SlangPy's example programs about its
# containers, reproduced: `buffers` (struct Tensors filled by a cursor and from numpy, added by a
# vectorized call) and `type_methods` with its InstanceList variants (an InstanceBuffer of
# particles constructed with random velocities and updated by a [mutating] method; the same
# over an InstanceList of two Tensors; the same through a Python subclass of InstanceList). Each
# program is written here in our own words but makes the same calls as the published one, under
# `import shadegrad as spy`, with the device type the only change; the test then checks the
# values the program printed.
import textwrap

import numpy as np
import pytest

from conftest import TEST_DEVICE

DEVICE = "spy.DeviceType.cuda" if TEST_DEVICE == "cuda" else "spy.DeviceType.cpu"

BUFFERS_SLANG = """
import "slangpy";
struct Pixel { float r; float g; float b; };
Pixel add(Pixel a, Pixel b)
{
    Pixel result;
    result.r = a.r + b.r;
    result.g = a.g + b.g;
    result.b = a.b + b.b;
    return result;
}
"""

PARTICLE_SLANG = """
import "slangpy";
struct Particle
{
    float3 position;
    float3 velocity;
    __init(float3 p, float3 v) { position = p; velocity = v; }
    [mutating] void update(float dt) { position += velocity * dt; }
};
"""

PROLOGUE = f"""
import pathlib
import numpy as np
import shadegrad as spy

device = spy.create_device(type={DEVICE}, include_paths=[pathlib.Path.cwd()])
module = spy.Module.load_from_file(device, "example.slang")
"""

BUFFERS = """
image_1 = spy.Tensor.empty(device, shape=(16, 16), dtype=module.Pixel)
image_2 = spy.Tensor.empty(device, shape=(16, 16), dtype=module.Pixel)

cursor_1 = image_1.cursor()
for x in range(16):
    for y in range(16):
        cursor_1[x + y * 16].write({"r": (x + y) / 32.0, "g": 0, "b": 0})
cursor_1.apply()

noise = 0.1 * np.random.default_rng(7).random(16 * 16 * 3).astype(np.float32)
image_2.copy_from_numpy(noise)

result = module.add(image_1, image_2)

printed = []
result_cursor = result.cursor()
for x in range(16):
    for y in range(16):
        printed.append(((x, y), result_cursor[x + y * 16].read()))
pixels = result.to_numpy().view(np.float32)
"""

TYPE_METHODS = """
particles = spy.InstanceBuffer(struct=module.Particle.as_struct(), shape=(10,))
particles.construct(p=spy.float3(0), v=spy.rand_float(-1, 1, 3))

before = []
result_cursor = particles.buffer.cursor()
for i in range(particles.shape[0]):
    instance = result_cursor[i].read()
    before.append((instance["position"], instance["velocity"]))

particles.update(0.1)

after = []
result_cursor = particles.buffer.cursor()
for i in range(particles.shape[0]):
    instance = result_cursor[i].read()
    after.append((instance["position"], instance["velocity"]))
"""

INSTANCE_LISTS = """
particles = spy.InstanceList(
    struct=module.Particle.as_struct(),
    data={
        "position": spy.Tensor.empty(device, shape=(10,), dtype=module.float3),
        "velocity": spy.Tensor.empty(device, shape=(10,), dtype=module.float3),
    },
)
particles.construct(p=spy.float3(0), v=spy.rand_float(-1, 1, 3))
before = (particles.position.to_numpy().view(dtype=np.float32).reshape(-1, 3),
          particles.velocity.to_numpy().view(dtype=np.float32).reshape(-1, 3))
particles.update(0.1)
after = (particles.position.to_numpy().view(dtype=np.float32).reshape(-1, 3),
         particles.velocity.to_numpy().view(dtype=np.float32).reshape(-1, 3))
"""

EXTEND_INSTANCE_LISTS = """
class MyParticles(spy.InstanceList):
    def __init__(self, name: str, count: int):
        super().__init__(module.Particle.as_struct())
        self.name = name
        self.position = spy.Tensor.empty(device, shape=(count,), dtype=module.float3)
        self.velocity = spy.Tensor.empty(device, shape=(count,), dtype=module.float3)

    def print_particles(self):
        return (self.name,
                self.position.to_numpy().view(dtype=np.float32).reshape(-1, 3),
                self.velocity.to_numpy().view(dtype=np.float32).reshape(-1, 3))


particles = MyParticles("particle buffer", 10)
particles.construct(p=spy.float3(0), v=spy.rand_float(-1, 1, 3))
before = particles.print_particles()
particles.update(0.1)
after = particles.print_particles()
"""


def run_program(tmp_path, monkeypatch, slang: str, body: str) -> dict:
    (tmp_path / "example.slang").write_text(slang)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(textwrap.dedent(PROLOGUE + body), "example_main.py", "exec"), scope)
    return scope


def test_buffers(tmp_path, monkeypatch):
    s = run_program(tmp_path, monkeypatch, BUFFERS_SLANG, BUFFERS)
    noise = (0.1 * np.random.default_rng(7).random(16 * 16 * 3).astype(np.float32)).reshape(16, 16, 3)
    assert len(s["printed"]) == 256
    for (x, y), pixel in s["printed"]:
        row, col = divmod(x + y * 16, 16)
        assert pixel["r"] == pytest.approx((x + y) / 32.0 + noise[row, col, 0], rel=1e-6)
        assert pixel["g"] == pytest.approx(noise[row, col, 1], rel=1e-6)
        assert pixel["b"] == pytest.approx(noise[row, col, 2], rel=1e-6)
    assert s["pixels"].shape == (16, 16, 3) and s["pixels"].dtype == np.float32
    assert s["result"].dtype.name == "Pixel" and s["result"].shape == (16, 16)


def _check_particles(before_pos, before_vel, after_pos, after_vel):
    before_pos, before_vel = np.asarray(before_pos, np.float32), np.asarray(before_vel, np.float32)
    assert np.all(before_pos == 0)
    assert np.all(before_vel >= -1) and np.all(before_vel < 1)
    assert len({tuple(v) for v in before_vel}) == len(before_vel)  # each particle its own velocity
    np.testing.assert_allclose(after_pos, before_pos + 0.1 * before_vel, rtol=1e-6)
    np.testing.assert_array_equal(after_vel, before_vel)


def test_type_methods(tmp_path, monkeypatch):
    s = run_program(tmp_path, monkeypatch, PARTICLE_SLANG, TYPE_METHODS)
    assert len(s["before"]) == 10
    _check_particles([p.to_list() for p, _ in s["before"]], [v.to_list() for _, v in s["before"]],
                     [p.to_list() for p, _ in s["after"]], [v.to_list() for _, v in s["after"]])


def test_type_methods_instance_lists(tmp_path, monkeypatch):
    s = run_program(tmp_path, monkeypatch, PARTICLE_SLANG, INSTANCE_LISTS)
    _check_particles(*s["before"], *s["after"])


def test_type_methods_extend_instance_lists(tmp_path, monkeypatch):
    s = run_program(tmp_path, monkeypatch, PARTICLE_SLANG, EXTEND_INSTANCE_LISTS)
    assert s["before"][0] == "particle buffer"
    _check_particles(*s["before"][1:], *s["after"][1:])
