# tests/python/test_repository.py — the repository stands on its own: its copy of the conformance
# kernels matches the project's original (when that sits beside the checkout), and the links of
# README.md and docs/ point at files inside the repository.
import filecmp
import re
from pathlib import Path

import pytest

from conftest import REPO

COPY = REPO / "tests" / "conformance"
ORIGINAL = REPO.parent / "shared" / "conformance"


def _files(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_conformance_copy_is_complete():
    names = _files(COPY)
    assert "README.md" in names
    tier1 = [n for n in names if re.fullmatch(r"T\d\d_\w+\.slang", n)]
    tier2 = [n for n in names if n.startswith("tier2/") and n.endswith(".slang")]
    assert len(tier1) >= 12, tier1
    assert len(tier2) >= 5, tier2


def test_conformance_copy_matches_the_original():
    if not ORIGINAL.is_dir():
        pytest.skip(f"no original conformance folder beside the repository ({ORIGINAL}): nothing to compare")
    assert _files(COPY) == _files(ORIGINAL), "the copy and ../shared/conformance hold different files"
    differ = [n for n in _files(COPY) if not filecmp.cmp(COPY / n, ORIGINAL / n, shallow=False)]
    assert not differ, f"tests/conformance differs from {ORIGINAL} in {differ}: copy the original again"


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _documents() -> list:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_links_point_inside_the_repository(doc):
    text = doc.read_text()
    bad = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address or an anchor in the same page
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(REPO.resolve()) or not path.exists():
            bad.append(target)
    assert not bad, f"{doc.name}: links that leave the repository or name no file: {bad}"
    assert "../shared" not in text, f"{doc.name} refers to ../shared, outside the repository"
