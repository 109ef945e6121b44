"""perseus.__version__ is the project's version: the one CHANGELOG.md's newest entry names."""
import os
import re

import perseus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_matches_the_newest_changelog_entry():
    with open(os.path.join(ROOT, "CHANGELOG.md")) as f:
        newest = re.search(r"^## \[([^\]]+)\]", f.read(), re.M).group(1)
    assert perseus.__version__ == newest
    assert re.fullmatch(r"\d+\.\d+\.\d+", perseus.__version__)
