"""The base of every error the project raises on purpose.

A caller that wants to tell "sog refused this input" from a bug catches `SogError`; the command line
turns one into a single line on stderr and exit status 2. Each concrete error also derives from the
built-in class it refines (`ValueError` for a bad value, `RuntimeError` for a failed run), so code that
catches those keeps working.
"""


class SogError(Exception):
    """An input, file, setting or move that sog refuses, or a run it could not carry out."""
