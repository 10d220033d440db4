"""Pytest configuration: make tests/support.py importable and keep hypothesis quiet."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
