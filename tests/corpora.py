"""``../shared/corpora`` beside the project, read in place (never copied into the project).

Tests that use a corpus skip, saying why, only where ``../shared`` is absent: a clone outside this
workplace. Here and in CI it is always there.
"""
from pathlib import Path

import pytest

#: ``../shared/corpora`` from the checkout, or from the folder of worktrees it sits in.
CORPORA = next((p / "shared" / "corpora" for p in Path(__file__).resolve().parents[1:]
                if (p / "shared" / "corpora").is_dir()), Path(__file__).resolve().parents[2] / "shared" / "corpora")
READABILITY_PAGES = CORPORA / "readability-pages"
ROBOTS_CASES = CORPORA / "robots" / "robots_cases.json"
EXTRACTION_DEV = CORPORA / "extraction-dev"


def needs(path: Path):
    """A skip marker for tests that read ``path``."""
    return pytest.mark.skipif(not path.exists(), reason=f"{path} not found: ../shared/corpora is absent")
