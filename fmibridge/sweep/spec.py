"""What a sweep is: a base run and the settings varied over it, and its TOML spec.

The spec file's keys and the checks made before the first run are on the docs'
sweeps page (docs/sweeps.md, "The spec file").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from ..core.errors import FmibridgeError
from ..core.limits import MAX_SWEEP_RUNS
from ..core.time_limit import check_timeout
from ..formats.adapter_tables import flatten
from ..formats.toml_file import read_toml
from .metrics import METRICS
from .runs import MODELS, Run, build_method

GROUPS = ("parameters", "start", "method")  # what a varied key may set, besides t_end
SWEEP_KEYS = {"metrics", "grid", "runs", "output", "timeout", "max_runs"}
SPEC_KEYS = SWEEP_KEYS | {f.name for f in dataclasses.fields(Run)}  # the base Run's
OUTPUT_KEYS = {"summary", "trajectories", "format"}


@dataclass(frozen=True)
class Sweep:
    """A base `Run`, and the settings varied over it.

    Parameters
    ----------
    base : Run
        Settings shared by every run.
    grid : mapping
        ``{"group.name": [values]}`` (group ``parameters``, ``start`` or
        ``method``, or the key ``t_end``), crossed as a cartesian product.
    runs : sequence of mapping
        Explicit settings (same keys, one value each), each crossed with the grid.
    metrics : sequence of str
        Names in `METRICS` or ``"package.module:function"`` taking (result, run).
    max_runs : int
        The most runs allowed; a larger sweep is refused before it is listed.
    """

    base: Run
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    runs: Sequence[Mapping[str, Any]] = ()
    metrics: Sequence[str] = ()
    max_runs: int = MAX_SWEEP_RUNS

    def __post_init__(self) -> None:
        problems = (
            _varied_problems(self.grid, self.runs)
            or _size_problems(self.n_runs, self.max_runs)
            or _run_problems(self.base, self.grid, self.runs)
        )
        if problems:
            raise FmibridgeError("Sweep: " + "; ".join(problems) + ".")

    @property
    def n_runs(self) -> int:
        """The number of runs, counted without listing them."""
        return len(self.points())

    def points(self) -> Points:
        """Return each run's varied settings, ``{"group.name": value}``."""
        return Points(self.grid, self.runs)

    def expand(self) -> Iterator[Run]:
        """Yield one `Run` per point: the base with the point's settings applied."""
        return (_apply(self.base, point) for point in self.points())


class Points(Sequence[dict[str, Any]]):
    """The points of a sweep: each of `runs` (or one empty run) crossed with the
    grid's cartesian product (`itertools.product`'s order), each made from its
    index when read, so that a huge sweep is counted without being listed."""

    def __init__(
        self, grid: Mapping[str, Sequence[Any]], runs: Sequence[Mapping[str, Any]]
    ) -> None:
        self._axes = [(name, list(values)) for name, values in grid.items()]
        self._runs = list(runs) or [{}]
        self.per_run = math.prod(len(values) for _, values in self._axes)

    def __len__(self) -> int:
        return self.per_run * len(self._runs)

    def first_with(self, listed: int, values: Mapping[str, Any]) -> int:
        """Return the index of the first point of run `listed` whose axes named
        in `values` take those values (the others their first)."""
        k = 0
        for name, axis in self._axes:
            k = k * len(axis) + (axis.index(values[name]) if name in values else 0)
        return listed * self.per_run + k

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        k = i + len(self) if i < 0 else i
        if not 0 <= k < len(self):
            raise IndexError(f"point {i} of {len(self)}")
        listed, k = divmod(k, self.per_run)
        chosen = []
        for name, values in reversed(self._axes):
            k, j = divmod(k, len(values))
            chosen.append((name, values[j]))
        return {**dict(self._runs[listed]), **dict(reversed(chosen))}


def _varied_problems(grid: Mapping, runs: Sequence[Mapping]) -> list[str]:
    """The problems with a sweep's grid lists, varied keys and values."""
    problems = [
        f"grid[{k!r}] must be a non-empty list"
        for k, v in grid.items()
        if isinstance(v, str | bytes) or not isinstance(v, Sequence) or not v
    ]
    keys = set(grid).union(*[set(r) for r in runs])
    problems += [
        f"{k!r} must be 't_end' or 'group.name' with group in {GROUPS}"
        for k in sorted(keys)
        if _split(k) is None
    ]
    if problems:
        return problems
    values = [
        (f"grid[{k!r}][{i}]", k, v) for k, vs in grid.items() for i, v in enumerate(vs)
    ]
    values += [
        (f"runs[{i}][{k!r}]", k, v) for i, r in enumerate(runs) for k, v in r.items()
    ]
    return [
        f"{where} = {value!r} must be a number"
        + ("" if key == "t_end" else ", a Boolean or a list of numbers")
        for where, key, value in values
        if not key.startswith("method.") and not _is_value(value, key == "t_end")
    ]


def _is_value(value: object, is_time: bool) -> bool:
    """A number (t_end); else also a Boolean or a list of numbers (an FMU's array)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return True
    is_numbers = isinstance(value, list) and all(_is_value(v, True) for v in value)
    return not is_time and (isinstance(value, bool) or is_numbers)


def _size_problems(n_runs: int, max_runs: object) -> list[str]:
    """A sweep larger than `max_runs`, or a `max_runs` that is no count."""
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        return [f"`max_runs` must be an integer >= 1, got {max_runs!r}"]
    if n_runs > max_runs:
        return [
            f"{n_runs} runs, more than max_runs = {max_runs}; set max_runs = {n_runs} "
            f"in the spec (or --max-runs {n_runs}) to run them all"
        ]
    return []


def _run_problems(
    base: Run, grid: Mapping[str, Sequence[Any]], runs: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The first run whose method does not build, each distinct setting tried once."""
    method = [k for k in grid if k.startswith("method.")]
    points = Points(
        {k: grid[k] for k in method},
        [{k: v for k, v in r.items() if k.startswith("method.")} for r in runs],
    )
    tried = set()
    for i, point in enumerate(points):
        settings = _apply(base, point).method
        if repr(settings) in tried:
            continue
        tried.add(repr(settings))
        try:
            build_method(settings)
        except FmibridgeError as exc:
            listed = i // max(points.per_run, 1)
            first = Points(grid, runs).first_with(listed, point)
            where = f"run {first} ({point})" if point else "every run"
            return [f"{where}: [method] {exc}".rstrip(".")]
    return []


def _split(key: str) -> tuple[str, str] | None:
    """Return (group, name) of a varied key, or None if it is malformed."""
    if key == "t_end":
        return ("t_end", "")
    group, _, name = key.partition(".")
    return (group, name) if group in GROUPS and name else None


def _apply(base: Run, point: Mapping[str, Any]) -> Run:
    """Return `base` with the settings of one sweep point."""
    groups: dict[str, Any] = {g: dict(getattr(base, g)) for g in GROUPS}
    t_end = base.t_end
    for key, value in point.items():
        group, name = _split(key)  # type: ignore[misc]  # checked by Sweep
        if group == "t_end":
            t_end = float(value)
        else:
            groups[group][name] = value
    return dataclasses.replace(base, t_end=t_end, **groups)


@dataclass(frozen=True)
class SweepSpec:
    """A sweep read from a TOML spec, with where its output goes."""

    sweep: Sweep
    summary: Path
    trajectories: Path | None = None
    file_format: str = "csv"
    timeout: float | None = None  # s of wall time per run


def load_sweep(
    path: str | Path, output_dir: str | Path = ".", *, max_runs: int | None = None
) -> SweepSpec:
    """Read a sweep spec (TOML; its keys: docs/sweeps.md).

    A model path is relative to the spec file, output paths to `output_dir`;
    `max_runs` (--max-runs) wins over the spec's.

    Raises
    ------
    FmibridgeError
        Listing every problem of the spec.
    """
    path = Path(path)
    spec = read_toml(path, "a sweep spec")
    problems = [
        f"`{key}` must be a table"
        for key in ("output", *GROUPS)
        if not isinstance(spec.get(key, {}), Mapping)
    ]
    output = spec.get("output", {})
    output = output if isinstance(output, Mapping) else {}
    problems += [
        f"unknown key {where + k!r} (allowed: {sorted(allowed)})"
        for table, allowed, where in (
            (spec, SPEC_KEYS, ""),
            (output, OUTPUT_KEYS, "output."),
        )
        for k in sorted(set(table) - allowed)
    ]
    if "model" not in spec:
        problems.append("missing `model`: a built-in name, an FMU or an adapter file")
    metrics = spec.get("metrics", [])
    if not isinstance(metrics, list):
        problems.append(f"`metrics` must be a list of names from {sorted(METRICS)}")
        metrics = []
    problems += [
        f"metric {name!r} is not one of {sorted(METRICS)}; a spec file cannot "
        f"import code (pass a plugin as --metric package.module:function)"
        for name in metrics
        if name not in METRICS
    ]
    summary, trajectories = (
        _inside(output_dir, output.get(key, default), f"output.{key}", problems)
        for key, default in (("summary", f"{path.stem}.csv"), ("trajectories", None))
    )
    grid, runs = spec.get("grid", {}), spec.get("runs", [])
    if not isinstance(grid, Mapping):
        problems.append("`grid` must be a table of lists")
        grid = {}
    if not (isinstance(runs, list) and all(isinstance(r, Mapping) for r in runs)):
        problems.append("`runs` must be an array of tables ([[runs]])")
        runs = runs if isinstance(runs, list) else []
    grid, runs = flatten(grid), [flatten(r) for r in runs if isinstance(r, Mapping)]
    problems += _varied_problems(grid, runs)
    try:
        timeout = check_timeout(spec.get("timeout"))
    except FmibridgeError as exc:
        problems.append(str(exc).rstrip("."))
        timeout = None
    if problems:
        raise FmibridgeError(f"{path}: " + "; ".join(problems) + ".")
    model = str(spec["model"])
    if model not in MODELS:
        model = str((path.parent / model).resolve())
    run = {k: v for k, v in spec.items() if k not in SWEEP_KEYS}  # the Run's fields
    base = Run(**run | {"model": model})
    max_runs = spec.get("max_runs", MAX_SWEEP_RUNS) if max_runs is None else max_runs
    try:
        sweep = Sweep(base, grid, runs, metrics, max_runs)
    except FmibridgeError as exc:
        raise FmibridgeError(f"{path}: {str(exc).removeprefix('Sweep: ')}") from None
    file_format = output.get("format", "csv")
    return SweepSpec(sweep, summary, trajectories, file_format, timeout)


def _inside(folder: str | Path, name: object, key: str, problems: list[str]):
    """Return `folder / name` if it stays inside `folder`, else record a problem."""
    if name is None:
        return None
    folder = Path(folder).resolve()
    target = (folder / str(name)).resolve()
    if not isinstance(name, str) or not name or not target.is_relative_to(folder):
        problems.append(
            f"{key} = {name!r} must be a relative path inside the output folder "
            f"{folder} (choose that folder with --output-dir)"
        )
        return None
    return target
