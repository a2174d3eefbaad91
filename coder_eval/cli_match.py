"""Matching one call of a command-line tool: its verb, positional arguments and flags.

One matcher serves the ``cli_called`` criterion (which calls count) and ``record_cli`` responses
(which canned answer a call gets), so the pattern that answers a call is the pattern that grades it.

A call matches when its arguments (program name left out) start with ``verb`` (or one of
``verb_any_of``; a string is split on spaces), its positional arguments after the verb start with
``positional``, and every entry of ``flags`` holds. Flags are named without dashes (``env`` is
``--env``, ``e`` is ``-e``); ``--name=value`` always carries a value, ``--name value`` when the name is
in ``value_flags`` or its check compares a value. ``ignore_flags`` are dropped (with their value)
before anything is matched. Each flag check is one of ``equals``, ``contains``, ``matches_regex``,
``any_of`` (a value check: some occurrence must satisfy it), ``present: true`` or ``absent: true``,
plus ``aliases`` (other names of the same flag).

Example::

    CliMatch(verb="deploy", flags={"env": {"equals": "staging"}}).matches(["deploy", "--env", "staging"])
    # True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

VALUE_CHECKS = ("equals", "contains", "matches_regex", "any_of")


def flag_name(name: str) -> str:
    """A flag's name without its dashes: ``--env`` -> ``env``."""
    return name.lstrip("-")


def _words(value: Any) -> Any:
    return value.split() if isinstance(value, str) else value


class FlagCheck(BaseModel):
    """What one flag must look like: one check, and other names it goes by."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    equals: str | None = Field(default=None, description="Its value equals this.")
    contains: str | None = Field(default=None, description="Its value contains this.")
    matches_regex: str | None = Field(default=None, description="Its value matches this regex.")
    any_of: list[str] | None = Field(default=None, description="Its value is one of these.")
    present: bool | None = Field(default=None, description="true: the flag is given.")
    absent: bool | None = Field(default=None, description="true: the flag is not given.")
    aliases: list[str] = Field(default_factory=list, description="Other names of the flag (e, --env ...).")

    @field_validator("aliases")
    @classmethod
    def _bare(cls, names: list[str]) -> list[str]:
        return [flag_name(n) for n in names]

    @field_validator("matches_regex")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        from coder_eval.patterns import check_pattern  # criteria build on sandbox specs

        if pattern is not None:
            check_pattern(pattern)
        return pattern

    @model_validator(mode="after")
    def _one_check(self) -> FlagCheck:
        given = [n for n in (*VALUE_CHECKS, "present", "absent") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give one check per flag, got {', '.join(given)}")
        return self

    @property
    def takes_value(self) -> bool:
        return any(getattr(self, n) is not None for n in VALUE_CHECKS)

    def holds(self, values: list[str | None]) -> bool:
        """``values``: one per occurrence of the flag (None: given without a value)."""
        if self.absent is not None:
            return not values if self.absent else bool(values)
        if self.present is not None:
            return bool(values) if self.present else not values
        if not self.takes_value:
            return bool(values)
        return any(v is not None and self._value_ok(v) for v in values)

    def wanted(self) -> str:
        """The check in words: ``equals 'staging'``, ``absent``, ``present``."""
        for name in (*VALUE_CHECKS, "present", "absent"):
            value = getattr(self, name)
            if value is not None:
                return name if isinstance(value, bool) else f"{name} {value!r}"
        return "present"

    def _value_ok(self, value: str) -> bool:
        if self.equals is not None:
            return value == self.equals
        if self.contains is not None:
            return self.contains in value
        if self.matches_regex is not None:
            from coder_eval.patterns import search  # the agent chose the value: a deadline

            return search(self.matches_regex, value) is not None
        return value in (self.any_of or [])


@dataclass(frozen=True)
class ParsedCall:
    """A call's arguments split into positionals and flags (flag name -> values, None: no value)."""

    positional: list[str]
    flags: dict[str, list[str | None]] = field(default_factory=dict)


def parse_args(args: Sequence[str], value_flags: set[str], ignore: set[str]) -> ParsedCall:
    """``["deploy", "web", "--env", "prod", "-f"]`` -> positional ``[deploy, web]``, flags
    ``{env: [prod], f: [None]}`` when ``env`` takes a value."""
    parsed = ParsedCall([])
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            parsed.positional.extend(args[i:])
            break
        if not word.startswith("-") or word == "-":
            parsed.positional.append(word)
            continue
        name, eq, value = flag_name(word).partition("=")
        found: str | None = value if eq else None
        if found is None and name in value_flags and i < len(args):
            found, i = args[i], i + 1
        if name not in ignore:
            parsed.flags.setdefault(name, []).append(found)
    return parsed


class CliMatch(BaseModel):
    """Which calls of a tool match: verb, positional arguments, flags (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    verb: list[str] | None = Field(
        default=None, description="Arguments the call starts with ('pages create')."
    )
    verb_any_of: list[list[str]] | None = Field(
        default=None, description="The call starts with one of these."
    )
    positional: list[str] = Field(default_factory=list, description="Positional arguments after the verb.")
    flags: dict[str, FlagCheck] = Field(default_factory=dict, description="Checks on flags, by name.")
    value_flags: list[str] = Field(default_factory=list, description="Flags that take the next argument.")
    ignore_flags: list[str] = Field(default_factory=list, description="Flags dropped before matching.")

    @field_validator("verb", mode="before")
    @classmethod
    def _verb_words(cls, value: Any) -> Any:
        return _words(value)

    @field_validator("verb_any_of", mode="before")
    @classmethod
    def _verbs_words(cls, value: Any) -> Any:
        return [_words(v) for v in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _one_verb(self) -> CliMatch:
        if self.verb is not None and self.verb_any_of is not None:
            raise ValueError("give 'verb' or 'verb_any_of', not both")
        return self

    def matches(self, args: Sequence[str]) -> bool:
        """Whether a call with these arguments (the program name left out) matches."""
        return self.mismatch(args) is None

    def mismatch(self, args: Sequence[str]) -> Mismatch | None:
        """None when a call with these arguments matches; else the first part that does not, with
        what the call had there (the agent's words, quoted and cut at :data:`SHOWN_CHARS`).

        Example: ``CliMatch(verb="deploy", flags={"env": {"equals": "staging"}}).mismatch(["deploy",
        "--env", "prod"])`` -> ``Mismatch(2, "flag env equals 'staging': got 'prod'")``.
        """
        value_flags = {flag_name(n) for n in self.value_flags}
        for name, check in self.flags.items():
            if check.takes_value:
                value_flags |= {flag_name(name), *check.aliases}
        parsed = parse_args(args, value_flags, {flag_name(n) for n in self.ignore_flags})
        verbs = [self.verb] if self.verb is not None else (self.verb_any_of or [[]])
        verb = next((v for v in verbs if parsed.positional[: len(v)] == v), None)
        if verb is None:
            wanted = " or ".join(repr(" ".join(v)) for v in verbs)
            return Mismatch(0, f"verb {wanted}: got {_shown(' '.join(parsed.positional[:3]))}")
        rest = parsed.positional[len(verb) :]
        if rest[: len(self.positional)] != self.positional:
            got = _shown(" ".join(rest[: len(self.positional)]))
            return Mismatch(1, f"positional {' '.join(self.positional)!r}: got {got}")
        for name, check in self.flags.items():
            values = [v for n in (flag_name(name), *check.aliases) for v in parsed.flags.get(n, [])]
            if not check.holds(values):
                got = ", ".join(_shown(v) if v is not None else "(no value)" for v in values) or "not given"
                return Mismatch(2, f"flag {flag_name(name)} {check.wanted()}: got {got}")
        return None


SHOWN_CHARS = 80
"""The most characters of an argument a mismatch quotes."""


class Mismatch(NamedTuple):
    """The first part of a call that did not match: ``stage`` 0 the verb, 1 positionals, 2 flags
    (a higher stage came closer), and the words saying what was wanted and what was there."""

    stage: int
    why: str


def _shown(text: str) -> str:
    """An argument of the agent's, quoted and escaped (``repr``), at most :data:`SHOWN_CHARS` long."""
    return repr(text[:SHOWN_CHARS]) + ("…" if len(text) > SHOWN_CHARS else "")
