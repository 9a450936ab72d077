# examples/png_files.py — PNG output for the examples with the standard library only (zlib +
# struct): an RGB image from a float tensor, and a loss curve drawn into a small raster by hand.
"""Writing PNG files without imaging libraries."""

import math
import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(path, width: int, height: int, rgb: bytes) -> None:
    """Writes `rgb` (height rows of width * 3 bytes, top row first) as an 8-bit RGB PNG."""
    assert len(rgb) == width * height * 3, (len(rgb), width, height)
    row = width * 3
    raw = b"".join(b"\x00" + rgb[y * row : (y + 1) * row] for y in range(height))  # filter 0 per row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit, RGB, no interlace
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(_chunk(b"IEND", b""))


def write_image(path, image) -> None:
    """Writes a float tensor (H, W, 3) with values in [0, 1] (clamped) as a PNG."""
    h, w, _ = image.shape
    data = (image.detach().clamp(0, 1) * 255 + 0.5).to("cpu").byte().contiguous()
    write_png(path, w, h, data.numpy().tobytes())


def write_curve(path, values, width: int = 480, height: int = 240) -> None:
    """Writes a line plot of positive `values` on a log scale (grid lines at powers of ten)."""
    pixels = bytearray(b"\xff" * (width * height * 3))

    def put(x, y, color):
        if 0 <= x < width and 0 <= y < height:
            i = (y * width + x) * 3
            pixels[i : i + 3] = bytes(color)

    margin = 12
    logs = [math.log10(max(v, 1e-30)) for v in values]
    lo, hi = min(logs), max(logs)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    plot_w, plot_h = width - 2 * margin, height - 2 * margin

    def to_y(log_value):
        return margin + round((hi - log_value) / (hi - lo) * (plot_h - 1))

    for decade in range(math.ceil(lo), math.floor(hi) + 1):  # grid lines at 10^k
        y = to_y(decade)
        for x in range(margin, margin + plot_w):
            put(x, y, (220, 220, 220))
    for x in range(margin, margin + plot_w):  # axes
        put(x, margin + plot_h - 1, (0, 0, 0))
    for y in range(margin, margin + plot_h):
        put(margin, y, (0, 0, 0))
    n = len(logs)
    previous = None
    for k, log_value in enumerate(logs):
        x = margin + (round(k / (n - 1) * (plot_w - 1)) if n > 1 else 0)
        y = to_y(log_value)
        if previous is not None:  # a straight segment from the previous point
            steps = max(abs(x - previous[0]), abs(y - previous[1]), 1)
            (x0, y0), dx, dy = previous, x - previous[0], y - previous[1]
            for t in range(steps + 1):
                put(round(x0 + dx * t / steps), round(y0 + dy * t / steps), (30, 90, 200))
        put(x, y, (30, 90, 200))
        previous = (x, y)
    write_png(path, width, height, bytes(pixels))
