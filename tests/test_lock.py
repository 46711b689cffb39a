"""requirements.lock and pyproject.toml agree, and this environment holds what the lock pins.

dev.py makes .venv from the lock alone (hashes required), so a new release of a dependency
changes nothing until someone refreshes the lock (`python3.11 dev.py lock`) and commits it;
a pyproject.toml edited without that refresh, or a lock edited by hand, fails here.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "requirements.lock"

_HASH = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Pin:
    name: NormalizedName
    version: str
    hashes: tuple[str, ...]
    line: int


def _entries(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement: comments dropped, continuations joined."""
    entries: list[tuple[int, str]] = []
    pending, first = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = "" if raw.lstrip().startswith("#") else raw.split(" #")[0].strip()
        if not line:
            continue
        pending, first = pending + " " + line.removesuffix("\\"), first or number
        if not line.endswith("\\"):
            entries.append((first, pending.strip()))
            pending, first = "", 0
    return entries


def read_lock(text: str) -> tuple[dict[NormalizedName, Pin], list[str]]:
    """The lock's pins by package name, and what in it is not one `name==version` with
    sha256 hashes."""
    pins: dict[NormalizedName, Pin] = {}
    problems: list[str] = []
    for number, entry in _entries(text):
        words = entry.split()
        hashes = tuple(word.removeprefix("--hash=") for word in words if word.startswith("--hash="))
        rest = [word for word in words if not word.startswith("--hash=")]
        try:
            requirement = Requirement(" ".join(rest))
        except InvalidRequirement as error:
            problems.append(f"requirements.lock line {number}: not a pinned requirement ({error})")
            continue
        specifiers = list(requirement.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
            problems.append(
                f"requirements.lock line {number}: {requirement.name} is not pinned to one version "
                f"({requirement.specifier or 'no version'})"
            )
            continue
        pin = Pin(canonicalize_name(requirement.name), specifiers[0].version, hashes, number)
        if not hashes:
            problems.append(f"requirements.lock line {number}: {pin.name}=={pin.version} has no --hash")
        problems += [
            f"requirements.lock line {number}: {pin.name} has a malformed hash {value!r}"
            for value in hashes
            if not _HASH.fullmatch(value)
        ]
        if pin.name in pins:
            problems.append(f"requirements.lock line {number}: {pin.name} is pinned twice")
        pins[pin.name] = pin
    return pins, problems


def declared(pyproject_text: str) -> list[tuple[str, Requirement]]:
    """(where, requirement) for what the lock must pin: the dependencies, the test extra and
    the build requirements (dev.py installs Abate itself without build isolation)."""
    data = tomllib.loads(pyproject_text)
    groups = {
        "dependencies": data["project"]["dependencies"],
        "optional-dependencies.test": data["project"]["optional-dependencies"]["test"],
        "build-system.requires": data["build-system"]["requires"],
    }
    return [(where, Requirement(text)) for where, texts in groups.items() for text in texts]


def lock_problems(pyproject_text: str, lock_text: str) -> list[str]:
    """Each requirement of pyproject.toml that the lock does not pin, or pins outside its range,
    and what in the lock is not a hashed pin."""
    pins, problems = read_lock(lock_text)
    for where, requirement in declared(pyproject_text):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        pin = pins.get(canonicalize_name(requirement.name))
        if pin is None:
            problems.append(f"pyproject.toml {where}: {requirement} is not in requirements.lock")
        elif not requirement.specifier.contains(pin.version, prereleases=True):
            problems.append(
                f"pyproject.toml {where}: {requirement}, but requirements.lock line {pin.line} "
                f"pins {pin.name}=={pin.version}"
            )
    return problems


def environment_problems(
    pins: dict[NormalizedName, Pin], installed: Callable[[str], str | None]
) -> list[str]:
    """Each locked package this environment lacks or holds at another version."""
    problems = []
    for pin in pins.values():
        version = installed(pin.name)
        if version is None:
            problems.append(f"{pin.name}=={pin.version} is locked but not installed")
        elif Version(version) != Version(pin.version):
            problems.append(f"{pin.name} {version} is installed, requirements.lock pins {pin.version}")
    return problems


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _extra_requirements(requirement: Requirement) -> list[Requirement]:
    """What the extras asked for (``psycopg[binary]``) add, from the installed metadata."""
    added = []
    for text in metadata.requires(requirement.name) or []:
        needed = Requirement(text)
        marker = needed.marker
        if marker is not None and not marker.evaluate({"extra": ""}) and any(
            marker.evaluate({"extra": extra}) for extra in requirement.extras
        ):
            added.append(needed)
    return added


REFRESH = "refresh it with: python3.11 dev.py lock (docs/operations.md, 'Installing: the lock')"


def test_the_lock_pins_every_requirement_of_pyproject_with_hashes():
    problems = lock_problems(PYPROJECT.read_text(encoding="utf-8"), LOCK.read_text(encoding="utf-8"))
    assert not problems, "\n".join([*problems, REFRESH])


def test_this_environment_holds_the_locked_versions():
    pins, problems = read_lock(LOCK.read_text(encoding="utf-8"))
    problems += environment_problems(pins, _installed_version)
    for _, requirement in declared(PYPROJECT.read_text(encoding="utf-8")):
        problems += [
            f"{requirement} needs {needed.name}, which requirements.lock does not pin"
            for needed in _extra_requirements(requirement)
            if canonicalize_name(needed.name) not in pins
        ]
    assert not problems, "\n".join([*problems, "remake .venv: python3.11 dev.py test"])


# What the checker must catch, made from the real files by one edit each.


def _lock_entry(text: str, name: str) -> str:
    """The block of lines of one package's entry in the lock (its pin, hashes and comments)."""
    match = re.search(rf"^{re.escape(name)}==.*?(?=^\S|\Z)", text, flags=re.MULTILINE | re.DOTALL)
    assert match, f"{name} is not in the lock"
    return match.group(0)


def _without_entry(text: str, name: str) -> str:
    return text.replace(_lock_entry(text, name), "")


def _without_hashes(text: str, name: str) -> str:
    entry = _lock_entry(text, name)
    first, *rest = entry.splitlines(keepends=True)
    kept = [line for line in rest if "--hash=" not in line]
    return text.replace(entry, first.replace(" \\", "") + "".join(kept))


def _rewritten(text: str, name: str, requirement: str) -> str:
    """The lock with one package's `name==version` line replaced by `requirement`."""
    return re.sub(rf"^{re.escape(name)}==\S+", requirement, text, flags=re.MULTILINE)


BROKEN = {
    "a dependency left out": (
        lambda pyproject, lock: (pyproject, _without_entry(lock, "sqlalchemy")),
        ("dependencies: sqlalchemy<2.1,>=2.0 is not in requirements.lock",),
    ),
    "a test dependency left out": (
        lambda pyproject, lock: (pyproject, _without_entry(lock, "pytest-xdist")),
        ("optional-dependencies.test: pytest-xdist>=3.6 is not in requirements.lock",),
    ),
    "the build backend left out": (
        lambda pyproject, lock: (pyproject, _without_entry(lock, "setuptools")),
        ("build-system.requires: setuptools>=68 is not in requirements.lock",),
    ),
    "a pin outside pyproject's range": (
        lambda pyproject, lock: (pyproject, _rewritten(lock, "pytest", "pytest==9.2.0")),
        ("test: pytest<9.2,>=8, but requirements.lock line", "pins pytest==9.2.0"),
    ),
    "pyproject narrowed without a refresh": (
        lambda pyproject, lock: (pyproject.replace('"orjson>=3.9,<4"', '"orjson>=3.9,<3.10"'), lock),
        ("dependencies: orjson<3.10,>=3.9, but requirements.lock line", "pins orjson=="),
    ),
    "a dependency added without a refresh": (
        lambda pyproject, lock: (pyproject.replace('"tzdata",', '"tzdata",\n    "rich-click>=1",'), lock),
        ("dependencies: rich-click>=1 is not in requirements.lock",),
    ),
    "an entry without hashes": (
        lambda pyproject, lock: (pyproject, _without_hashes(lock, "eventsourcing")),
        (": eventsourcing==", " has no --hash"),
    ),
    "a range instead of a pin": (
        lambda pyproject, lock: (pyproject, _rewritten(lock, "structlog", "structlog>=24")),
        ("structlog is not pinned to one version (>=24)",),
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_the_checker_catches_a_lock_that_disagrees(case):
    edit, fragments = BROKEN[case]
    pyproject, lock = edit(PYPROJECT.read_text(encoding="utf-8"), LOCK.read_text(encoding="utf-8"))
    problems = lock_problems(pyproject, lock)
    assert any(all(part in problem for part in fragments) for problem in problems), problems


def test_the_checker_catches_an_environment_that_differs_from_the_lock():
    pins, _ = read_lock(LOCK.read_text(encoding="utf-8"))
    installed = {name: pin.version for name, pin in pins.items()}
    installed["pytest"] = "9.2.0"
    del installed["greenlet"]
    problems = environment_problems(pins, installed.get)
    assert problems == [
        f"greenlet=={pins['greenlet'].version} is locked but not installed",
        f"pytest 9.2.0 is installed, requirements.lock pins {pins['pytest'].version}",
    ]
