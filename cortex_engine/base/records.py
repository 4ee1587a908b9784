"""Value classes declared like dataclasses, without what `dataclasses` costs every process at import.

`@dataclass` builds each class through several `exec` calls and pulls in `inspect` (and with it `ast`, `dis`,
`tokenize`): about 1 ms of CPU per class here, some 30 ms for the ~30 classes a one-shot `cortex recall` or
SessionStart header imports, on a command whose whole budget is twice a bare Python start. `@record` builds a
class with one `exec` (its `__init__`), and shares its `__repr__`, `__eq__` and `__hash__`: the same
declarations (annotations, defaults, `field(default_factory=...)`, `frozen=True`, `slots=True`), the same
behaviour, and type checkers read it as a dataclass (PEP 681, `dataclass_transform`).

Modules off the hot paths may keep using `dataclasses`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")


class _Missing:
    """The marker for "no default"."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenRecordError(AttributeError):
    """An assignment to a field of a frozen record (as `dataclasses.FrozenInstanceError`)."""


class _Field:
    """What `field(...)` declares: a default, or a factory called once per instance."""

    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | Any) -> None:
        self.default, self.default_factory = default, default_factory


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING) -> Any:
    """A field's default, or a factory for a fresh mutable default per instance (`field(default_factory=list)`)."""
    return _Field(default, default_factory)


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(
    cls: type[T] | None = None, /, *, frozen: bool = False, slots: bool = False
) -> type[T] | Callable[[type[T]], type[T]]:
    """Make `cls` a record: `__init__` from its annotated fields in order (base classes' first), value
    `__repr__` and `__eq__`; with `frozen`, assignment raises `FrozenRecordError` and instances hash by value;
    with `slots`, instances have `__slots__` and no `__dict__`."""

    def wrap(cls: type[T]) -> type[T]:
        built: type[T] = _build(cls, frozen=frozen, slots=slots)  # the same class, or its slotted copy
        return built

    return wrap if cls is None else wrap(cls)


def fields(obj: object) -> tuple[str, ...]:
    """The field names of a record class or instance, in `__init__` order."""
    built: Any = obj  # `record` sets `__record_fields__` on the class, which the type of `obj` cannot say
    return tuple(built.__record_fields__)


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record `obj` with `changes` applied (as `dataclasses.replace`)."""
    values = {name: getattr(obj, name) for name in fields(obj)}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    return type(obj)(**values)


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return isinstance(text, str) and text.split("[", 1)[0].rsplit(".", 1)[-1] == "ClassVar"


def _build(cls: Any, *, frozen: bool, slots: bool) -> Any:
    names: list[str] = []
    defaults: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        names += [n for n in getattr(base, "__record_fields__", ()) if n not in names]
        defaults.update(getattr(base, "__record_defaults__", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        if name not in names:
            names.append(name)
        if name in cls.__dict__:
            declared = cls.__dict__[name]
            defaults[name] = declared if isinstance(declared, _Field) else _Field(declared, MISSING)
    namespace: dict[str, Any] = {"MISSING": MISSING, "_set": object.__setattr__}
    params, body, seen_default = [], [], False
    for name in names:
        declared = defaults.get(name)
        if declared is not None and declared.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = declared.default_factory
            params.append(f"{name}=MISSING")
            body.append(f" _set(self, {name!r}, _factory_{name}() if {name} is MISSING else {name})")
        elif declared is not None and declared.default is not MISSING:
            namespace[f"_default_{name}"] = declared.default
            params.append(f"{name}=_default_{name}")
            body.append(f" _set(self, {name!r}, {name})")
        else:
            if seen_default:
                raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with a default")
            params.append(name)
            body.append(f" _set(self, {name!r}, {name})")
            continue
        seen_default = True
    lines = [f"def __init__(self, {', '.join(params)}):", *(body or [" pass"])]
    if "__post_init__" in cls.__dict__ or any("__post_init__" in b.__dict__ for b in cls.__mro__[1:-1]):
        lines.append(" self.__post_init__()")
    exec("\n".join(lines), namespace)  # one small function per class, where dataclasses runs several
    attrs: dict[str, Any] = {
        "__init__": namespace["__init__"],
        "__record_fields__": tuple(names),
        "__record_defaults__": defaults,
        "__match_args__": tuple(names),
    }
    if "__repr__" not in cls.__dict__:
        attrs["__repr__"] = _repr
    if "__eq__" not in cls.__dict__:
        attrs["__eq__"] = _eq
    if frozen:
        attrs["__setattr__"] = attrs["__delattr__"] = _frozen
        if cls.__dict__.get("__hash__") is None:
            attrs["__hash__"] = _hash
    elif "__eq__" not in cls.__dict__:
        attrs["__hash__"] = None
    body_dict = {k: v for k, v in cls.__dict__.items() if k not in names}
    if slots:
        body_dict.pop("__dict__", None)
        body_dict.pop("__weakref__", None)
        body_dict["__slots__"] = tuple(n for n in names if n not in getattr(cls.__mro__[1], "__record_fields__", ()))
        made = type(cls)(cls.__name__, cls.__bases__, {**body_dict, **attrs})
        made.__qualname__ = cls.__qualname__
        return made
    for name in names:  # defaults live in __init__, not as class attributes
        if name in cls.__dict__:
            delattr(cls, name)
    for key, value in attrs.items():
        setattr(cls, key, value)
    return cls


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in self.__record_fields__)


def _repr(self: Any) -> str:
    inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__)
    return f"{type(self).__qualname__}({inner})"


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is not self.__class__:
        # typeshed's NotImplementedType subclasses Any; mypy lets it pass only inside a class's own `__eq__`
        return NotImplemented  # type: ignore[no-any-return]
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _frozen(self: Any, name: str, value: Any = None) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")
