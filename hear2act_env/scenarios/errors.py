"""The one error type for bad scenario data, so callers can catch it precisely."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario (or domain content file) breaks a structural rule.

    The message always names *where* (scenario id or file, and line when read
    from a file), *which field* and *which rule*, so a data author can fix it
    without a debugger.
    """

    def __init__(
        self,
        where: str,
        field: str,
        rule: str,
        *,
        line: int | None = None,
    ) -> None:
        self.where = where
        self.field = field
        self.rule = rule
        self.line = line
        prefix = f"line {line}: " if line is not None else ""
        super().__init__(f"{prefix}{where}: {field}: {rule}")

    @property
    def scenario_id(self) -> str:
        return self.where

    def at_line(self, line: int) -> ScenarioError:
        """The same error, located at a line of a JSONL file."""
        return ScenarioError(self.where, self.field, self.rule, line=line)
