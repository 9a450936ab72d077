# tests/python/test_layering.py — the layers of docs/design.md, checked on the sources: each
# folder of src/ includes only from the layers below it (and the call layer never from the
# Python layer), and the Python layer keeps no plan cache, key bytes or launch sequence.
import re

from conftest import REPO

# Each layer and the layers it may include from (itself included).
ALLOWED = {
    "base": {"base"},
    # The front end's two rooms: syntax (lexer, preprocessor, parser, AST), then semantics.
    "syntax": {"base", "syntax"},
    "lang": {"base", "syntax", "lang"},
    "ir": {"base", "syntax", "lang", "ir"},
    "autodiff": {"base", "syntax", "lang", "ir", "autodiff"},
    "codegen": {"base", "syntax", "lang", "ir", "codegen"},
    # The runtime sees codegen's output only: the kernel ABI headers.
    "runtime": {"base", "codegen", "runtime"},
    "driver": {"base", "syntax", "lang", "ir", "autodiff", "codegen", "driver"},
    "call": {"base", "syntax", "lang", "ir", "autodiff", "codegen", "runtime", "driver", "call"},
    # The torch bridge shares only the tensor record of the call layer (its C ABI).
    "bridge": {"base", "call", "bridge"},
    "python": {"base", "syntax", "lang", "ir", "autodiff", "codegen", "runtime", "driver", "call", "bridge", "python"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)


def _sources(layer):
    folder = REPO / "src" / layer
    return sorted(p for p in folder.iterdir() if p.suffix in (".h", ".cpp", ".inc"))


def test_every_source_folder_is_a_known_layer():
    folders = {p.name for p in (REPO / "src").iterdir() if p.is_dir()}
    assert folders == set(ALLOWED), "a new folder of src/ needs its row here and in docs/design.md"


def test_layers_include_only_from_below():
    wrong = []
    for layer, allowed in ALLOWED.items():
        for path in _sources(layer):
            for folder, header in INCLUDE.findall(path.read_text()):
                if folder not in allowed:
                    wrong.append(f"src/{layer}/{path.name} includes {folder}/{header}")
    assert not wrong, "\n".join(wrong)


def test_the_runtime_sees_only_the_kernel_abi_of_codegen():
    headers = set()
    for path in _sources("runtime"):
        headers |= {h for f, h in INCLUDE.findall(path.read_text()) if f == "codegen"}
    assert headers <= {"call_header.h", "fault_record.h"}, headers


def test_the_python_layer_keeps_no_plan_cache_key_bytes_or_launch_sequence():
    for path in _sources("python"):
        text = path.read_text()
        for owned_by_call in ("CallKey", "build_call_key", "append_link_key", "plans.find", "launch::",
                              "LaunchData", "CallPlan::", "zero_gradient_buffers", "key_bytes"):
            assert owned_by_call not in text, f"src/python/{path.name} uses {owned_by_call}"
