"""Reading TOML on every supported Python: the standard library's ``tomllib`` from 3.11, its
backport ``tomli`` (the same parser, a dependency on 3.10 only) before."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError, loads
else:  # pragma: no cover - Python 3.10
    from tomli import TOMLDecodeError, loads

__all__ = ["TOMLDecodeError", "loads"]
