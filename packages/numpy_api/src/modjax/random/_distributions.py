"""Placeholder: filled in by the random work."""

__all__: list[str] = []
