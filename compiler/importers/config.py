"""The merged SkillOpt settings as the importer reads them: each key taken at most once,
typed on the way out, and every key never taken reported with the reason it has no
counterpart, so that no key is dropped in silence.
"""

from __future__ import annotations

from typing import TypeVar

from skopt.compiler.importers.skillopt_keys import reason
from skopt.compiler.importers.yaml_config import Setting
from skopt.grammar.source import Diagnostic, Span, error, warning

BLANK = (None, "")
_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off", "")
T = TypeVar("T")


class Config:
    def __init__(self, settings: dict[str, Setting], whole: Span) -> None:
        self.settings = settings
        self.whole = whole  # where a diagnostic about no key in particular points
        self.taken: set[str] = set()
        self.backends: tuple[str, ...] = ()  # what the roles run on, once known
        self.diagnostics: list[Diagnostic] = []

    # -- reading ---------------------------------------------------------------------------

    def take(self, key: str) -> object:
        """The key's value, or None when it is absent or blank; the key counts as mapped."""
        self.taken.add(key)
        setting = self.settings.get(key)
        return None if setting is None or setting.value in BLANK else setting.value

    def written(self, key: str) -> bool:
        setting = self.settings.get(key)
        return setting is not None and setting.value not in BLANK

    def span(self, key: str) -> Span:
        setting = self.settings.get(key)
        return setting.span if setting else self.whole

    def first(self, *keys: str) -> tuple[str, object] | None:
        """The first of `keys` that holds a value, all of them taken."""
        found = None
        for key in keys:
            value = self.take(key)
            if found is None and value is not None:
                found = (key, value)
        return found

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.take(key)
        if value is None:
            return default
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return str(value)
        return self._wrong(key, "a string", default)

    def integer(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.take(key)
        if value is None:
            return default
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            return self._wrong(key, f"a whole number of at least {minimum}", default)
        return value

    def real(self, key: str, default: float | None = None) -> float | None:
        value = self.take(key)
        if value is None:
            return default
        try:
            if isinstance(value, bool):
                raise ValueError
            return float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return self._wrong(key, "a number", default)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.take(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str | int) and str(value).lower() in _TRUE + _FALSE:
            return str(value).lower() in _TRUE
        return self._wrong(key, "true or false", default)

    def _wrong(self, key: str, expected: str, default: T) -> T:
        value = self.settings[key].value
        self.diagnostics.append(
            error(
                f"'{key}' must be {expected}, not {value!r}",
                self.span(key),
                "SkillOpt would reject this value too",
            )
        )
        return default

    # -- reporting -------------------------------------------------------------------------

    def approximated(self, key: str, message: str, help: str = "") -> None:
        self.diagnostics.append(
            warning(f"'{key}' approximated: {message}", self.span(key), "approximated", help)
        )

    def refuse(self, key: str, message: str, help: str = "") -> None:
        self.diagnostics.append(error(message, self.span(key), help=help))

    def unused(self, key: str, why: str) -> None:
        """A key whose value SkillOpt itself would not use here."""
        self.taken.add(key)
        if self.written(key):
            self.diagnostics.append(
                warning(f"'{key}' has no effect here: {why}", self.span(key), "dropped")
            )

    def report_rest(self) -> None:
        """Every key never taken: a warning naming it and why skopt has no counterpart."""
        for key in sorted(self.settings, key=lambda k: self.settings[k].span.line):
            if key not in self.taken:
                self.diagnostics.append(
                    warning(
                        f"'{key}' has no counterpart in skopt",
                        self.settings[key].span,
                        "dropped",
                        reason(key, self.backends),
                    )
                )
