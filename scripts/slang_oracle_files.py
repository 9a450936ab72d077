#!/usr/bin/env python3
"""What real Slang says about kernel files that include or import others: like
shared/tools/slang_oracle.py, but each file is loaded from its path (load_from_file), with its
folder and its folder's `include` subfolder as include paths (as the tests/lang harness does).

    ~/slangvenv/bin/python scripts/slang_oracle_files.py FILE.slang [FILE...]

Prints ACCEPT, or REJECT with each error's number, file, line, column and text."""
import os
import re
import sys

if len(sys.argv) < 2:
    print(__doc__)
    sys.exit(2)
import slangpy as spy  # noqa: E402

ERR = re.compile(r"error\[E(\d+)\]: ([^|]*)\|\s*-->\s*([^:|]*):(\d+):(\d+)")
devices = {}
for path in sys.argv[1:]:
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in devices:
        paths = [folder] + ([os.path.join(folder, "include")] if os.path.isdir(os.path.join(folder, "include")) else [])
        devices[folder] = spy.create_device(type=spy.DeviceType.cpu, include_paths=paths)
    try:
        spy.Module.load_from_file(devices[folder], os.path.abspath(path))
        print(f"ACCEPT {path}")
    except Exception as e:  # noqa: BLE001
        flat = str(e).replace("\n", " | ")
        errs = ERR.findall(flat)
        if not errs:
            print(f"REJECT {path}: {flat[:300]}")
        for code, msg, file, line, col in errs:
            if code == "39999":
                continue
            print(f"REJECT {path}: {os.path.relpath(file, folder)}:{line}:{col}: E{code}: {msg.strip()}")
