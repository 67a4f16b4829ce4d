"""nubo.s3.copy(): nubo.copy() (nubo.stores) under its S3 name, kept for existing programs.

    >>> from nubo import s3
    >>> s = s3.copy("ckpt/", "s3://my-bucket/run1/")
"""

from __future__ import annotations

from .stores import CopySummary, copy

__all__ = ["CopySummary", "copy"]
