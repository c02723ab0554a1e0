"""Build a mechanism from the command line: ``NAME --param value ...``.

Any class exported by [`mechanisms`][mechanisms] that subclasses ``TopKMechanism`` can
be named (case-insensitive; ``limit-domain`` and ``LimitDomain`` both work).
Parameters are the dataclass fields of that class, given as ``--k 3`` or
``--k=3``; types come from the field annotations.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing

from .errors import UsageError

__all__ = [
    "ENTRY_PREFIXES",
    "build_mechanism",
    "entry_for",
    "find_mechanism_class",
    "flag",
    "mechanism_classes",
    "parse_param_tokens",
]

#: Named collections of ready-built mechanisms: ``catalog:NAME`` (bugs written here) and
#: ``corpus:NAME`` (real bugs rebuilt from public trackers and papers).
ENTRY_PREFIXES = ("catalog:", "corpus:")


def entry_for(spec: str):
    """The catalog or corpus entry that ``catalog:NAME`` / ``corpus:NAME`` names (KeyError if none)."""
    prefix, _, name = spec.partition(":")
    if prefix == "corpus":
        from dpaudit.corpus import entry

        return entry(name)
    from dpaudit.catalog import catalog_entry

    return catalog_entry(name)


def mechanism_classes() -> dict[str, type]:
    """Every concrete mechanism class exported by [`mechanisms`][mechanisms], by name."""
    import mechanisms  # the reference mechanisms (and scipy): only once one is named

    found: dict[str, type] = {}
    loaded = vars(mechanisms)
    for name in getattr(mechanisms, "__all__", dir(mechanisms)):
        # Names the package loads lazily (the joint wrappers, which need Python objects
        # and so are never buildable here) are skipped rather than imported.
        obj = loaded.get(name)
        if (
            inspect.isclass(obj)
            and issubclass(obj, mechanisms.TopKMechanism)
            and not inspect.isabstract(obj)
            and dataclasses.is_dataclass(obj)
            and _buildable(obj)
        ):
            found[name] = obj
    return found


def _buildable(cls) -> bool:
    """Every required parameter is a number, text or flag (wrappers need Python)."""
    import mechanisms

    simple = (int, float, str, bool, type(None))
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        if not field.init or field.default is not dataclasses.MISSING:
            continue
        options = typing.get_args(hints.get(field.name)) or (hints.get(field.name),)
        if not all(
            o in simple or o is mechanisms.TopKMechanism or typing.get_origin(o) is typing.Literal
            for o in options
        ):
            return False
    return True


def _normalise(name: str) -> str:
    return name.replace("-", "").replace("_", "").lower()


def find_mechanism_class(name: str) -> type:
    classes = mechanism_classes()
    for class_name, cls in classes.items():
        if _normalise(class_name) == _normalise(name):
            return cls
    import difflib

    by_key = {_normalise(n): n for n in classes}
    close = difflib.get_close_matches(_normalise(name), list(by_key), n=1, cutoff=0.6)
    if close:
        raise UsageError(f"unknown mechanism {name!r} (did you mean {by_key[close[0]]}?)")
    known = ", ".join(sorted(classes)) or "(none)"
    raise UsageError(f"unknown mechanism {name!r}; known: {known} (see `dpaudit mechanisms`)")


def parse_param_tokens(tokens: list[str]) -> dict[str, str]:
    """``['--k', '3', '--kbar=10']`` -> ``{'k': '3', 'kbar': '10'}``."""
    params: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("--") or token == "--":
            raise UsageError(f"expected --PARAM VALUE, got {token!r}")
        key = token[2:]
        if "=" in key:
            key, value = key.split("=", 1)
            i += 1
        else:
            if i + 1 >= len(tokens):
                raise UsageError(f"parameter --{key} needs a value")
            value = tokens[i + 1]
            i += 2
        params[key.replace("-", "_")] = value
    return params


def _convert(field_name: str, text: str, annotation):
    import mechanisms

    if annotation is mechanisms.TopKMechanism:
        # A wrapped mechanism, given as its own command line: --mechanism "GumbelTopK --k 3 ..."
        import shlex

        tokens = shlex.split(text)
        if not tokens:
            raise UsageError(
                f'{flag(field_name)} needs a mechanism, e.g. "GumbelTopK --k 3 --epsilon 1"'
            )
        return build_mechanism(tokens[0], tokens[1:])
    origin = typing.get_origin(annotation)
    options = (
        typing.get_args(annotation)
        if origin in (typing.Union, getattr(__import__("types"), "UnionType", None))
        else (annotation,)
    )
    if text.lower() in ("none", "null", "inf", "unrestricted") and type(None) in options:
        return None
    errors = []
    for option in options:
        if option is type(None):
            continue
        try:
            if option is bool:
                if text.lower() in ("1", "true", "yes", "on"):
                    return True
                if text.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError("not a boolean")
            if option is int:
                return _integer(text)
            if option is float:
                value = float(text)
                if value != value:  # NaN passes every comparison a validator makes
                    raise ValueError("not a number")
                return value
            if option is str:
                return text
            if typing.get_origin(option) is typing.Literal:
                if text in typing.get_args(option):
                    return text
                raise ValueError(f"one of {typing.get_args(option)}")
        except ValueError as error:
            errors.append(str(error))
    raise UsageError(f"{flag(field_name)}: cannot read {text!r} as {_type_words(options)}")


def _integer(text: str) -> int:
    """``3``, ``1e6`` or ``1_000``; ``2.5`` is refused (as ``int('2.5')`` is)."""
    try:
        return int(text)
    except ValueError:
        value = float(text)  # a ValueError here names the text
        if value != value or value in (float("inf"), float("-inf")) or value != int(value):
            raise ValueError("not a whole number") from None
        return int(value)


def _type_words(options) -> str:
    words = {
        int: "an integer",
        float: "a number",
        bool: "true/false",
        str: "text",
        type(None): "none",
    }
    parts = []
    for option in options:
        if typing.get_origin(option) is typing.Literal:
            parts.append("one of " + ", ".join(map(str, typing.get_args(option))))
        else:
            parts.append(words.get(option, getattr(option, "__name__", str(option))))
    return " or ".join(parts)


def flag(field_name: str) -> str:
    """The command-line spelling of a parameter: ``max_items`` -> ``--max-items``."""
    return "--" + field_name.replace("_", "-")


def closest_option(name: str, known) -> str | None:
    """The known option a mistyped ``name`` most likely meant, or None.

    An option that ``name`` begins (``--eps`` for ``--epsilon``) comes first, the shortest
    such; otherwise difflib's closest match (``--sample`` for ``--samples``). Without the
    first rule difflib offers ``--help`` for ``--eps``.
    """
    import difflib

    known = list(known)
    extending = sorted((k for k in known if k.startswith(name) and k != name), key=len)
    if extending and len(name) > 2:
        return extending[0]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return close[0] if close else None


def build_mechanism(name: str, tokens: list[str], command_options=()):
    """Construct mechanism ``name`` from ``--param value`` tokens; errors are ``UsageError``.

    ``command_options`` are the command's own options, offered as suggestions when a
    token is neither one of them nor a parameter of the mechanism.
    """
    cls = find_mechanism_class(name)
    params = parse_param_tokens(tokens)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs = {}
    for key, text in params.items():
        if key not in fields:
            known = [flag(f) for f in fields] + list(command_options)
            close = closest_option(flag(key), known)
            hint = f" (did you mean {close}?)" if close else ""
            allowed = ", ".join(flag(f) for f in fields)
            raise UsageError(f"unknown option {flag(key)}{hint}; {cls.__name__} takes {allowed}")
        kwargs[key] = _convert(key, text, hints.get(key, str))
    missing = [
        flag(f.name)
        for f in fields.values()
        if f.name not in kwargs
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise UsageError(f"{cls.__name__} needs {', '.join(missing)}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:
        message = str(error)
        for field_name in fields:  # name parameters as they are typed on the command line
            message = message.replace(f"{field_name} must", f"{flag(field_name)} must")
        raise UsageError(f"{cls.__name__}: {message}") from None
