#!/usr/bin/env python3
# scripts/slang_oracle_check.py — checks the kernel-language test programs against real Slang.
"""Runs every program under tests/lang through the Slang compiler (SlangPy's CPU device: a module
load runs slangc's front end and its differentiability checks) and compares its verdict with what
the program's headers claim:

* a program with `// expect:` must be ACCEPTED;
* a must-fail program (`// error:`) must be REJECTED, and where it names `// error-code: N`, Slang's
  errors must include EN;
* `unsupported_*` programs use constructs outside shadegrad's subset that are valid Slang: they
  must be ACCEPTED (shadegrad rejects them with "not supported yet");
* must-fail programs marked `// oracle: stricter REASON` are valid Slang that shadegrad rejects on
  purpose (REASON says why, e.g. a constant index out of range, which Slang leaves undefined at run
  time): Slang must ACCEPT them; they are counted and listed as intentional differences;
* programs marked `// oracle: skip REASON` are not checked (the oracle cannot judge them, e.g. an
  error Slang only reports when it links an entry point); the reason is listed;
* side files (under a `lib/` or `include/` folder) are not programs: they are loaded by the
  programs that include or import them. A program that includes or imports a file is loaded from
  its path, with its folder and the folder's `include` subfolder as include paths (as the tests/lang
  harness resolves them).

A single-file program that Slang loads is then compiled as a kernel too: an entry point that calls
`test()` and stores its result is linked and run on Slang's CPU device, which reports the errors
Slang only finds when it links an entry point (an unresolved external symbol, runaway generic
specialization, a loop it cannot unroll). Where test() returns `float`, `int`, `uint` or a vector
of them, the stored value is compared with `// expect:` (float within 1e-4 relative).

Slang's errors come back as `error[EN]: message --> file:line:col`, or from its preprocessor as
`file(line): error N: message`; `E39999 import failed due to compilation error` and the fatal
`E40003 compilation ceased` are the loader's follow-ups, not diagnostics (other E39999 messages
are Slang's own, e.g. "expression does not evaluate to a compile-time constant").

SlangPy is not a dependency of shadegrad: run this with a Python that has it, e.g.

    python3 -m venv ~/slangvenv && ~/slangvenv/bin/pip install slangpy==0.43.1
    ~/slangvenv/bin/python scripts/slang_oracle_check.py [--verbose] [PATH_OR_FOLDER ...]

Exit status: 0 when every checked program agrees with Slang, 1 otherwise, 2 without slangpy."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANG = ROOT / "tests" / "lang"
ERROR_RE = re.compile(r"error\[E(\d+)\]: ([^|]*)\|\s*-->\s*[^|]*?:(\d+):(\d+)")
PP_ERROR_RE = re.compile(r"\((\d+)\): error (\d+): ([^|]*)")
BARE_ERROR_RE = re.compile(r"error\[E(\d+)\]: ([^|]*)")
DOWNSTREAM_RE = re.compile(r"(gcc|clang|g\+\+)[^|]*error[^|]*")
FOLLOW_UPS = {("39999", "import failed due to compilation error"), ("40003", "compilation ceased")}
SIDE_FOLDERS = {"lib", "include"}
MULTI_FILE_RE = re.compile(r'^\s*(#\s*include|__include|import\s+(?!slangpy\s*;)(?!"slangpy"))', re.M)


def slang_errors(message: str, line_offset: int) -> list:
    """[(code, message, line)] from a load failure's text; line_offset is subtracted from lines."""
    flat = message.replace("\n", " | ")
    errors = [(c, m.strip(), int(line) - line_offset) for c, m, line, _ in ERROR_RE.findall(flat)]
    errors += [(c, m.strip(), int(line) - line_offset) for line, c, m in PP_ERROR_RE.findall(flat)]
    # Errors the linker reports without a location (E30029 array index out of bounds).
    if not errors:
        errors = [(c, m.strip(), 0) for c, m in BARE_ERROR_RE.findall(flat)]
    errors = [e for e in errors if (e[0], e[1]) not in FOLLOW_UPS]
    if not errors and DOWNSTREAM_RE.search(flat):
        # Slang's CPU target compiles its C++ with the host compiler: a failure there (a helper its
        # prelude lacks, e.g. I8_max) is Slang's backend, not a verdict on the program.
        errors = [("99999", "Slang's CPU backend failed: " + DOWNSTREAM_RE.search(flat).group(0)[:120], 0)]
    return errors or [("?", flat[:200], 0)]


def header(text: str, key: str) -> list:
    return [m.group(1).strip() for m in re.finditer(r"^\s*//\s*" + key + r":\s*(.*)$", text, re.M)]


def expectation(path: Path, text: str):
    """('accept' | 'reject' | 'skip', codes, reason)."""
    skip = header(text, "oracle")
    if skip and skip[0].startswith("skip"):
        return "skip", [], skip[0][4:].strip() or "no reason given"
    if skip and skip[0].startswith("stricter"):
        return "stricter", [], skip[0][8:].strip() or "no reason given"
    if path.name.startswith("unsupported_"):
        return "accept", [], ""
    if header(text, "error"):
        return "reject", [c for v in header(text, "error-code") for c in v.split()], ""
    return "accept", [], ""


def programs(paths: list) -> list:
    out = []
    for p in paths:
        p = Path(p)
        p = p.resolve()
        out += sorted(p.rglob("*.slang")) if p.is_dir() else [p]
    # Conformance .test files are appended to their kernel by the C++ harness; they are checked
    # there, not here.
    return [p for p in out if p.suffix == ".slang"]


ENTRY = """
RWByteAddressBuffer sg_out;
[shader("compute")][numthreads(1, 1, 1)]
void sg_entry(uint3 tid : SV_DispatchThreadID) { sg_out.Store(0, test()); }
"""
RESULT_RE = re.compile(r"^\s*(float|int|uint)([234]?)\s+test\s*\(\s*\)", re.M)
GLOBAL_BUFFER_RE = re.compile(r"^\s*(?:RW)?StructuredBuffer<\s*(\w+)\s*>\s+(\w+)\s*;", re.M)


def global_buffers(spy, device, text: str) -> dict:
    """The program's global buffers with their `// input: NAME = ...` contents (elements of one
    scalar kind, stored densely as the tests/lang harness stores them)."""
    import numpy as np

    out = {}
    usage = spy.BufferUsage.unordered_access | spy.BufferUsage.shader_resource
    for elem, name in GLOBAL_BUFFER_RE.findall(text):
        for h in header(text, "input"):
            key, _, values = h.partition("=")
            if key.strip() != name:
                continue
            kind = np.int32 if elem.startswith("int") else np.uint32 if elem.startswith("uint") else np.float32
            data = np.array([float(v) for v in re.findall(r"[-+]?[0-9.]+(?:e[-+]?[0-9]+)?", values)], dtype=kind)
            data = np.concatenate([data, np.zeros((-len(data)) % 4, dtype=kind)])  # whole 16-byte rows
            out[name] = device.create_buffer(size=data.nbytes, usage=usage, data=data)
    return out


UNIFORM_RE = re.compile(r"^\s*(?:uniform\s+)?(float|int|uint|bool)([234]?)\s+(\w+)\s*(\[\s*\d+\s*\])?\s*;", re.M)


def uniform_globals(spy, text: str) -> dict:
    """The program's scalar and vector uniform globals (`float g_scale;`, `float g_w[4];`) with their
    `// input: NAME = ...` values, as the tests/lang harness gives them."""
    out = {}
    for scalar, rows, name, array in UNIFORM_RE.findall(text):
        for h in header(text, "input"):
            key, _, values = h.partition("=")
            if key.strip() != name:
                continue
            words = re.findall(r"true|false|[-+]?[0-9.]+(?:e[-+]?[0-9]+)?", values)
            conv = {"float": float, "int": int, "uint": int, "bool": lambda w: w == "true" or w == "1"}[scalar]
            items = [conv(w if scalar == "bool" else (float(w) if scalar == "float" else int(float(w)))) for w in words]
            if array:  # scalar elements only
                out[name] = items
            else:
                out[name] = getattr(spy, scalar + rows)(*items) if rows else items[0]
    return out


def run_entry(spy, device, n: int, path: Path, text: str):
    """Links and runs an entry point calling test(): (errors, stored values or None)."""
    import numpy as np

    try:
        module = device.load_module_from_source(f"k{n}_" + re.sub(r"\W", "_", path.stem), text + ENTRY)
        program = device.link_program([module], [module.entry_point("sg_entry")])
        kernel = device.create_compute_kernel(program)
        usage = spy.BufferUsage.unordered_access | spy.BufferUsage.shader_resource
        buffer = device.create_buffer(size=64, usage=usage, data=np.zeros(16, dtype=np.uint32))
        kernel.dispatch(thread_count=[1, 1, 1], vars={"sg_out": buffer, **global_buffers(spy, device, text),
                                                       **uniform_globals(spy, text)})
    except Exception as e:  # noqa: BLE001
        return slang_errors(str(e), 1), None
    m = RESULT_RE.search(text)
    if not m:
        return [], None
    kind = {"float": np.float32, "int": np.int32, "uint": np.uint32}[m.group(1)]
    return [], [float(v) for v in buffer.to_numpy().view(kind)[: int(m.group(2) or 1)]]


def same_values(got: list, text: str) -> bool:
    words = {"true": "1", "false": "0"}
    tokens = re.findall(r"[-+]?(?:inf|nan|true|false|[0-9.]+(?:e[-+]?[0-9]+)?)", header(text, "expect")[0])
    want = [float(words.get(v, v)) for v in tokens]
    return len(want) == len(got) and all(
        (g != g and w != w) or g == w or abs(g - w) <= 1e-4 * max(abs(w), 1e-2) for g, w in zip(got, want))


def load(spy, devices: dict, n: int, path: Path, text: str):
    """Slang's verdict: ('accept', [], values or None) or ('reject', errors, None)."""
    try:
        if MULTI_FILE_RE.search(text):
            folder = path.parent
            if folder not in devices:
                paths = [str(folder)] + ([str(folder / "include")] if (folder / "include").is_dir() else [])
                devices[folder] = spy.create_device(type=spy.DeviceType.cpu, include_paths=paths)
            spy.Module.load_from_file(devices[folder], str(path))
        else:
            spy.Module.load_from_source(devices[None], f"m{n}_" + re.sub(r"\W", "_", path.stem), text)
    except Exception as e:  # noqa: BLE001 (any load failure is Slang's verdict)
        # SlangPy puts one line of its own above a source: its line numbers come back one high.
        return "reject", slang_errors(str(e), 0 if MULTI_FILE_RE.search(text) else 1), None
    if MULTI_FILE_RE.search(text) or header(text, "link") or header(text, "constants") or \
            not re.search(r"\btest\s*\(\s*\)\s*\{", text) or text.rfind("/*") > text.rfind("*/"):
        return "accept", [], None
    errors, values = run_entry(spy, devices[None], n, path, text)
    return ("reject", errors, None) if errors else ("accept", [], values)


def worker(paths: list) -> int:
    """Judges each file in a process of its own making; prints one JSON verdict a line."""
    import json

    import slangpy as spy

    spy.Logger.get().level = spy.LogLevel.none
    devices = {None: spy.create_device(type=spy.DeviceType.cpu)}
    for n, name in enumerate(paths):
        path = Path(name)
        if not path.exists():
            continue
        got, errors, values = load(spy, devices, n, path, path.read_text())
        print(json.dumps({"path": name, "got": got, "errors": errors, "values": values}), flush=True)
    return 0


def verdicts(paths: list, batch: int = 60):
    """{path: (got, errors, values)}. Files are judged in worker processes, a batch each: Slang
    keeps state per device and can crash on a file; a file that kills a fresh worker on its own is
    reported as 'crash'."""
    import json
    import subprocess

    out, todo, alone = {}, list(paths), False
    while todo:
        chunk = todo[:1] if alone else todo[:batch]
        proc = subprocess.run([sys.executable, __file__, "--worker", *chunk], capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                v = json.loads(line)
                out[v["path"]] = (v["got"], [tuple(e) for e in v["errors"]], v["values"])
        done = [c for c in chunk if c in out]
        todo = todo[len(done):]
        if len(done) < len(chunk):
            if alone:
                out[todo[0]] = ("crash", [("?", f"Slang's process died (exit {proc.returncode})", 0)], None)
                todo = todo[1:]
            alone = not alone
        else:
            alone = False
    return out


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[str(LANG)])
    ap.add_argument("--verbose", action="store_true", help="print every verdict, not only disagreements")
    args = ap.parse_args()
    try:
        import slangpy  # noqa: F401
    except ImportError:
        print("slang_oracle_check: slangpy is not installed in this Python (see --help)")
        return 2
    counts = {"values": 0, "agree": 0, "disagree": 0, "intentional": 0, "skip": 0, "side": 0, "crash": 0}
    listed, judged, texts = [], [], {}
    for path in programs(args.paths):
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if SIDE_FOLDERS & set(path.relative_to(LANG).parts[:-1] if path.is_relative_to(LANG) else ()):
            counts["side"] += 1
            continue
        texts[path] = path.read_text()
        want, codes, reason = expectation(path, texts[path])
        if want == "skip":
            counts["skip"] += 1
            listed.append(f"SKIP     {rel}: {reason}")
            continue
        judged.append(path)
    results = verdicts([str(p) for p in judged])
    for path in judged:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        text = texts[path]
        want, codes, reason = expectation(path, text)
        got, errors, values = results.get(str(path), ("crash", [("?", "the file went away during the run", 0)], None))
        internal = {"99999", "99997"}
        if got == "crash" or (errors and all(e[0] in internal for e in errors)) or \
                (any(e[0] in internal for e in errors) and not codes):
            # Slang's own failure (an internal compiler error): no verdict on the program.
            counts["crash"] += 1
            listed.append(f"SLANG    {rel}: Slang failed internally ({'; '.join(e[1] for e in errors[:1])})")
            continue
        if want == "stricter":
            ok = got == "accept"
            counts["intentional" if ok else "disagree"] += 1
            if ok:
                listed.append(f"STRICTER {rel}: {reason}")
            else:
                print(f"MISMATCH {rel}: marked stricter (Slang should accept), Slang {got}")
            continue
        ok = got == want and (want != "reject" or not codes or
                              any(int(c) in {int(e[0]) for e in errors if e[0] != "?"} for c in codes))
        if ok and values is not None and want == "accept" and header(text, "expect"):
            counts["values"] += 1
            if not same_values(values, text):
                ok, got = False, f"accept with value {values}"
        counts["agree" if ok else "disagree"] += 1
        if not ok or args.verbose:
            detail = "; ".join(f"E{c} line {line}: {m}" for c, m, line in errors[:3])
            print(f"{'ok' if ok else 'MISMATCH':8} {rel}: expected {want}{' ' + ','.join(codes) if codes else ''}, "
                  f"Slang {got}{': ' + detail if detail else ''}")
    for line in listed:
        print(line)
    print(f"slang_oracle_check: {counts['agree']} agree, {counts['disagree']} disagree, "
          f"{counts['intentional']} intentional (stricter), {counts['skip']} skipped, {counts['side']} side files, "
          f"{counts['crash']} where Slang failed internally; {counts['values']} results compared with Slang's")
    return 0 if counts["disagree"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
