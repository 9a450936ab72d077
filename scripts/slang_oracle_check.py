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
* programs marked `// oracle: skip REASON` are not checked (e.g. limits of shadegrad's own, such
  as its loop-depth bound, or multi-file programs); the reason is listed.

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
ERROR_RE = re.compile(r"error\[E(\d+)\]: ([^|]*)\|\s*-->\s*[^:]*:(\d+):(\d+)")


def header(text: str, key: str) -> list:
    return [m.group(1).strip() for m in re.finditer(r"^\s*//\s*" + key + r":\s*(.*)$", text, re.M)]


def expectation(path: Path, text: str):
    """('accept' | 'reject' | 'skip', codes, reason)."""
    skip = header(text, "oracle")
    if skip and skip[0].startswith("skip"):
        return "skip", [], skip[0][4:].strip() or "no reason given"
    if path.name.startswith("unsupported_"):
        return "accept", [], ""
    if header(text, "error"):
        return "reject", [c for v in header(text, "error-code") for c in v.split()], ""
    return "accept", [], ""


def programs(paths: list) -> list:
    out = []
    for p in paths:
        p = Path(p)
        out += sorted(p.rglob("*.slang")) if p.is_dir() else [p]
    # Conformance .test files are appended to their kernel by the C++ harness; they are checked
    # there, not here.
    return [p for p in out if p.suffix == ".slang"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[str(LANG)])
    ap.add_argument("--verbose", action="store_true", help="print every verdict, not only disagreements")
    args = ap.parse_args()
    try:
        import slangpy as spy
    except ImportError:
        print("slang_oracle_check: slangpy is not installed in this Python (see --help)")
        return 2
    device = spy.create_device(type=spy.DeviceType.cpu)
    counts = {"agree": 0, "disagree": 0, "skip": 0}
    for n, path in enumerate(programs(args.paths)):
        text = path.read_text()
        want, codes, reason = expectation(path, text)
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if want == "skip":
            counts["skip"] += 1
            print(f"SKIP     {rel}: {reason}")
            continue
        try:
            # SlangPy puts one line of its own above the source: its line numbers come back one high.
            spy.Module.load_from_source(device, f"m{n}_" + re.sub(r"\W", "_", path.stem), text)
            got, errors = "accept", []
        except Exception as e:  # noqa: BLE001 (any load failure is Slang's verdict)
            flat = str(e).replace("\n", " | ")
            errors = [(c, m.strip(), int(line) - 1) for c, m, line, _ in ERROR_RE.findall(flat) if c != "39999"]
            got = "reject"
            if not errors:
                errors = [("?", flat[:200], 0)]
        ok = got == want and (want != "reject" or not codes or any(c in {e[0] for e in errors} for c in codes))
        counts["agree" if ok else "disagree"] += 1
        if not ok or args.verbose:
            detail = "; ".join(f"E{c} line {line}: {m}" for c, m, line in errors[:3])
            print(f"{'ok' if ok else 'MISMATCH':8} {rel}: expected {want}{' ' + ','.join(codes) if codes else ''}, "
                  f"Slang {got}{': ' + detail if detail else ''}")
    print(f"slang_oracle_check: {counts['agree']} agree, {counts['disagree']} disagree, {counts['skip']} skipped")
    return 0 if counts["disagree"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
