"""The rule registry: ``rrule`` and ``frule``, looked up by the function object.

``rrule(f, *args, **kwargs)`` returns ``(y, pullback)`` or ``None``; ``pullback(y_bar)``
returns ``(f_bar, x1_bar, ..., xn_bar)``. ``frule((f_dot, x1_dot, ..., xn_dot), f, *args,
**kwargs)`` returns ``(y, y_dot)`` or ``None``. Keyword arguments are passed through to the
rule and never differentiated.

Zeros are handled here, not in rules: when every cotangent reaching a pullback is an
``AbstractZero`` the rule's pullback is not called and zeros are returned (pullbacks are
linear); when every input tangent of an frule is zero, the function runs once and its output
tangent is ``ZeroTangent()``. A cotangent that is a thunk as a whole is evaluated first (the
pullback needs its value anyway), so a rule never receives a thunk of its whole cotangent nor a
zero; components of a multi-output cotangent stay as given, thunks included.

``None`` is a zero everywhere a (co)tangent goes: a whole cotangent ``None``, a ``None``
component of a multi-output cotangent (``(None, V_bar)`` for ``eigh``) and a ``None`` input
tangent of an frule all mean ``ZeroTangent()``, and rules never receive ``None``. This is the
convention of PyTorch's and HIPS autograd's ``None`` gradients; ``ZeroTangent()`` is the
library's own spelling and what rules return.

So are the checks every rule would otherwise repeat (:mod:`rules.core.checks`), each raising an
error that names the function before the rule runs:

* an object array among the arguments raises ``TypeError`` (in ``rrule`` and ``frule``);
* the cotangent of an array (or scalar) output, and each component of the cotangent of a tuple
  output, must have the output's shape (``ValueError`` otherwise, instead of being broadcast or
  summed into a wrong answer, DESIGN.md section 3); a list, a tuple, or a number for an array of
  more than one element, raises ``TypeError``. Values without a ``shape`` of other types (zeros,
  user tangent types) and thunked components are left to the rule;
* a ``Tangent`` cotangent of a tuple output whose ``primal_type`` is another type is matched to
  the output's fields by name, or refused with ``TypeError`` naming the expected type: it is never
  read by position;
* when no argument has a tangent space (bools, bool arrays, strings, ``None``), the pullback
  is not called: every cotangent is ``NoTangent()``, whatever the rule would have made of it
  (an eigh of a bool matrix has ties, which must not raise);
* the frule's input tangents get the same checks against their arguments (shapes of array
  arguments, fields of tuple arguments).

An exception raised inside a rule, its pullback or its pushforward whose message does not name
the function (numpy's and scipy's own errors) is raised again as the same type, the function's
name in front, chained to the original (``__cause__``).

Fitting the cotangents to the call: a rule keeps its function's signature, options included
(``def sum_rrule(a, axis=None, dtype=None, out=None, keepdims=False)``), and its pullback returns
cotangents for its leading parameters, at least ``(f_bar, x1_bar)``. The registry then returns
exactly one per positional argument of the call: trailing arguments the pullback left out (an
axis, a shape, indices, a flag) get ``NoTangent()``; cotangents of parameters the caller passed by
keyword are dropped, since keyword arguments are never differentiated (``np.average(a, None, w)``
differentiates ``w``, ``np.average(a, weights=w)`` does not). A cotangent left out for a
differentiable argument is therefore a ``NoTangent()`` that ``rules.testing.check_rrule`` rejects.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from rules.core import deferred
from rules.core.checks import (
    ALL_BOOL,
    check_array_tangent,
    check_tangents,
    function_name,
    has_no_tangent_space,
    match_fields,
    object_input,
    object_input_error,
    plain_arrays,
    plain_parts,
    plain_tangents,
    primal_shape,
    renamed_error,
)
from rules.core.deferred import defer, is_foreign_array, lift_foreign
from tangents import (
    AbstractThunk,
    AbstractZero,
    NoTangent,
    Tangent,
    ZeroTangent,
    canonicalize,
    unthunk,
)
from tangents.structural import field_names, has_fields

__all__ = [
    "RuleTable",
    "defer",
    "frule",
    "function_name",
    "is_foreign_array",
    "is_zero_cotangent",
    "lift_foreign",
    "rrule",
    "split_cotangent",
]

Rule = Callable[..., Any]


def is_zero_cotangent(y_bar: Any) -> bool:
    """Whether ``y_bar`` is a symbolic zero, or a tuple/``Tangent`` whose every component is one.

    Thunks count as non-zero: they are never evaluated to find out. ``None`` is a zero (see the
    module docstring).
    """
    if type(y_bar) is np.ndarray:  # the common case, decided without isinstance chains
        return False
    if y_bar is None or isinstance(y_bar, AbstractZero):
        return True
    if isinstance(y_bar, Tangent):
        backing = y_bar.backing
        values = backing.values() if isinstance(backing, dict) else backing
        return all(is_zero_cotangent(v) for v in values)
    if type(y_bar) is tuple or type(y_bar) is list:
        return all(is_zero_cotangent(v) for v in y_bar)
    return False


def split_cotangent(y_bar: Any, n: int) -> tuple[Any, ...]:
    """The ``n`` components of the cotangent of a multi-output function, missing ones as zeros.

    Accepts a zero (all components zero), a plain tuple or list of length ``n``, or a ``Tangent``
    of the output's type (a namedtuple such as numpy's ``EighResult``, or a tuple), or a thunk
    of any of these. Components are returned as given (their thunks are not evaluated), except
    that ``None`` (the whole cotangent or a component) becomes ``ZeroTangent()``.
    """
    if type(y_bar) is tuple and len(y_bar) == n:  # the common case: returned as it is
        for part in y_bar:
            if part is None:
                break
        else:
            return y_bar
    y_bar = unthunk(y_bar)
    if y_bar is None:
        y_bar = ZeroTangent()
    if isinstance(y_bar, AbstractZero):
        return (y_bar,) * n
    if isinstance(y_bar, Tangent):
        backing = y_bar.backing
        if isinstance(backing, dict):
            backing = tuple(canonicalize(y_bar).backing.values())  # type: ignore[union-attr]
        parts = tuple(backing)
        parts = parts + (ZeroTangent(),) * (n - len(parts))
    elif isinstance(y_bar, tuple | list):
        parts = tuple(y_bar)
    else:
        raise TypeError(
            f"the cotangent of a function with {n} outputs must be a tuple or a Tangent, "
            f"got {type(y_bar).__name__}"
        )
    if len(parts) != n:
        raise ValueError(f"the cotangent has {len(parts)} components; the output has {n}")
    return _none_as_zero(parts)


def _none_as_zero(parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """``parts`` with each ``None`` replaced by ``ZeroTangent()`` (the module's convention)."""
    if any(p is None for p in parts):
        return tuple(ZeroTangent() if p is None else p for p in parts)
    return parts


_FUNCTION_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    np.ufunc,
    type(np.sum),  # numpy 2's array-function dispatchers (np.sum, np.linalg.solve): a __dict__
    type,
)


def _is_plain_function(f: Any) -> bool:
    """Functions, builtins, ufuncs, numpy's dispatchers and classes have no fields to differentiate.

    Any other callable is an object with fields when :func:`tangents.structural.has_fields`
    says so (the notion ``ProjectTo`` and the rule checker use); only a plain function's
    cotangent is ``NoTangent()``.
    """
    return isinstance(f, _FUNCTION_TYPES) or not has_fields(f)


def _positional_count(rule: Rule, skip: int) -> int | None:
    """How many positional parameters ``rule`` has after ``skip``; ``None`` for ``*args``."""
    try:
        parameters = list(inspect.signature(rule).parameters.values())[skip:]
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in parameters if p.kind in kinds)


def _fit_to_call(cotangents: Any, n_args: int, positional: int | None) -> Any:
    """One cotangent per positional argument (see the module docstring); others left as they are."""
    n = 1 + n_args
    if not isinstance(cotangents, tuple) or len(cotangents) == n:
        return cotangents
    if 2 <= len(cotangents) < n:
        return cotangents + (NoTangent(),) * (n - len(cotangents))
    if positional is not None and n < len(cotangents) <= 1 + positional:
        return cotangents[:n]
    return cotangents


def _zero_cotangents(f: Any, n_args: int) -> tuple[Any, ...]:
    f_bar = NoTangent() if _is_plain_function(f) else ZeroTangent()
    return (f_bar,) + (ZeroTangent(),) * n_args


class RuleTable:
    """A table of rules keyed by function object, with a ``register`` decorator.

    Instances are ``rrule`` and ``frule``; call them to apply a rule.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._by_function: dict[Any, Rule] = {}
        self._by_call_type: dict[type, Rule] = {}
        self._by_method: dict[tuple[type, str], Rule] = {}
        self._positional: dict[Rule, int | None] = {}

    def _check_new(self, table: dict[Any, Rule], key: Any, override: bool) -> None:
        if key in table and not override:
            raise ValueError(
                f"an {self.kind} for {function_name(key)} is already registered "
                f"({table[key].__qualname__}); pass override=True to replace it"
            )

    def register(self, f: Any, *, override: bool = False) -> Callable[[Rule], Rule]:
        """Decorator registering a rule for calls ``f(*args, **kwargs)``.

        The decorated function takes the same arguments as ``f`` (an frule takes the tuple of
        tangents first). Registering a second rule for the same ``f`` raises ``ValueError``
        unless ``override=True``.
        """
        hash(f)  # a clear TypeError now rather than a KeyError later
        deferred.load_deferred()  # the library's own rules first, so a clash is reported here

        def decorator(rule: Rule) -> Rule:
            self._check_new(self._by_function, f, override)
            self._by_function[f] = rule
            self._positional[rule] = _positional_count(rule, skip=0)
            return rule

        return decorator

    def register_call(self, cls: type, *, override: bool = False) -> Callable[[Rule], Rule]:
        """Decorator registering a rule for calling *instances* of ``cls`` (callable objects).

        The rule receives the instance first: ``rule(obj, *args)`` (an frule:
        ``rule(tangents, obj, *args)``), and its pullback returns the instance's own cotangent
        first, e.g. a structural ``Tangent(cls, ...)`` for its fields.
        """

        def decorator(rule: Rule) -> Rule:
            self._check_new(self._by_call_type, cls, override)
            self._by_call_type[cls] = rule
            self._positional[rule] = _positional_count(rule, skip=1)
            return rule

        return decorator

    def register_method(
        self, cls: type, name: str, *, override: bool = False
    ) -> Callable[[Rule], Rule]:
        """Decorator registering a rule for the bound method ``obj.name`` of instances of ``cls``.

        For methods of C types (``scipy.sparse.linalg.SuperLU.solve``), whose bound methods are
        new objects at each access and cannot be registry keys. The rule receives the instance
        first: ``rule(obj, *args)`` (an frule: ``rule(tangents, obj, *args)``, where
        ``tangents[0]`` is the tangent of ``obj``), and its pullback returns the cotangent of
        ``obj`` first: the cotangent of a bound method is that of the object it is bound to.
        """
        kind = self.kind

        def decorator(rule: Rule) -> Rule:
            key = (cls, name)
            if key in self._by_method and not override:
                raise ValueError(
                    f"an {kind} for {cls.__name__}.{name} is already registered; pass "
                    "override=True to replace it"
                )
            if kind == "rrule":

                def bound(method: Any, *args: Any, **kwargs: Any) -> Any:
                    return rule(method.__self__, *args, **kwargs)
            else:

                def bound(tangents: Any, method: Any, *args: Any, **kwargs: Any) -> Any:
                    return rule(tangents, method.__self__, *args, **kwargs)

            bound.__qualname__ = getattr(rule, "__qualname__", "method_rule")
            self._by_method[key] = bound
            self._positional[bound] = _positional_count(rule, skip=1)
            return rule

        return decorator

    def lookup(self, f: Any) -> tuple[Rule, bool] | None:
        """The rule for ``f`` and whether it takes the callable first, or ``None``."""
        try:
            rule = self._by_function.get(f)
        except TypeError:  # unhashable callable object
            rule = None
        if rule is not None:
            return rule, False
        for cls in type(f).__mro__:
            rule = self._by_call_type.get(cls)
            if rule is not None:
                return rule, True
        owner = getattr(f, "__self__", None)
        if self._by_method and owner is not None and not isinstance(owner, types.ModuleType):
            for cls in type(owner).__mro__:
                rule = self._by_method.get((cls, getattr(f, "__name__", "")))
                if rule is not None:
                    return rule, True
        if deferred.DEFERRED and deferred.load_deferred():
            return self.lookup(f)
        return None

    def __contains__(self, f: Any) -> bool:
        return self.lookup(f) is not None

    def unregister(self, f: Any) -> None:
        """Remove the rule for ``f`` (or for instances of the class ``f``); mainly for tests."""
        for table in (self._by_function, self._by_call_type if isinstance(f, type) else {}):
            rule = table.pop(f, None)
            if rule is not None and rule not in self._by_function.values():
                self._positional.pop(rule, None)


def _check_cotangent(f: Any, y: Any, y_bar: Any, shape: tuple[int, ...] | None) -> Any:
    """The checks of the module docstring on a non-zero cotangent; ``y_bar``, fields matched.

    For a tuple output each component is checked against its output (thunks are not evaluated).
    """
    if shape is not None:
        check_array_tangent(f"{function_name(f)} pullback", "the cotangent", y_bar, shape)
    elif isinstance(y, tuple):
        name = f"{function_name(f)} pullback"
        if isinstance(y_bar, Tangent):
            y_bar = match_fields(name, "the cotangent", y_bar, y)
        if isinstance(y_bar, Tangent | tuple | list):
            fields = field_names(type(y))
            for i, (part, y_i) in enumerate(zip(split_cotangent(y_bar, len(y)), y, strict=True)):
                shape_i = primal_shape(y_i)
                if shape_i is not None and not isinstance(part, AbstractZero | AbstractThunk):
                    label = f"output {i}" if fields is None else fields[i]
                    check_array_tangent(name, f"the cotangent of {label}", part, shape_i)
    return y_bar


class _ReverseRules(RuleTable):
    def __call__(
        self, f: Any, *args: Any, **kwargs: Any
    ) -> tuple[Any, Callable[[Any], Any]] | None:
        """Apply the reverse rule of ``f``: ``(y, pullback)``, or ``None`` if there is none."""
        found = self.lookup(f)
        if found is None:
            return None
        rule, takes_callable = found
        plain = plain_arrays(args)
        if plain:  # the hot case: no object array, nothing foreign, constant only if all bool
            lifted = None
            constant = plain == ALL_BOOL
        else:
            bad = object_input(args)
            if bad is not None:
                raise object_input_error(function_name(f), bad)
            lifted = deferred.foreign_module(args) if deferred.FOREIGN else None
            constant = bool(args) and all(map(has_no_tangent_space, args))
        try:
            if lifted is not None:
                result = lifted.lifted_rrule(f, args, kwargs)
            elif takes_callable:
                result = rule(f, *args, **kwargs)
            else:
                result = rule(*args, **kwargs)
        except Exception as error:
            renamed = renamed_error(error, f, "")
            if renamed is None:
                raise
            raise renamed from error
        if result is None:
            return None
        y, pullback = result
        n_args = len(args)
        n_cotangents = n_args + 1
        positional = self._positional.get(rule)
        shape = y.shape if type(y) is np.ndarray else primal_shape(y)
        outputs = len(y) if shape is None and isinstance(y, tuple) else 0

        def pullback_skipping_zeros(y_bar: Any) -> tuple[Any, ...]:
            try:
                if (
                    type(y_bar) is np.ndarray
                    and y_bar.shape == shape
                    and not constant
                    and not y_bar.dtype.hasobject
                ):  # the hot case
                    cotangents = pullback(y_bar)
                    if type(cotangents) is tuple and len(cotangents) == n_cotangents:
                        return cotangents  # one per argument already
                    return _fit_to_call(cotangents, n_args, positional)
                if outputs and not constant and plain_parts(y, y_bar, outputs):
                    cotangents = pullback(y_bar)  # (w_bar, V_bar): the hot case of tuples
                    if type(cotangents) is tuple and len(cotangents) == n_cotangents:
                        return cotangents
                    return _fit_to_call(cotangents, n_args, positional)
                if type(y_bar) is not np.ndarray and isinstance(y_bar, AbstractThunk):
                    # The pullback needs the value anyway; evaluating it here also catches a
                    # thunk whose value is a zero, which rules would otherwise receive.
                    y_bar = y_bar.unthunk()
                if is_zero_cotangent(y_bar):
                    return _zero_cotangents(f, n_args)
                if (type(y_bar) is tuple or type(y_bar) is list) and any(p is None for p in y_bar):
                    y_bar = type(y_bar)(ZeroTangent() if p is None else p for p in y_bar)
                y_bar = _check_cotangent(f, y, y_bar, shape)
                if constant:  # bools and strings only: nothing to differentiate, nor to raise
                    return (_zero_cotangents(f, 0)[0],) + (NoTangent(),) * n_args
                return _fit_to_call(pullback(y_bar), n_args, positional)
            except Exception as error:
                renamed = renamed_error(error, f, " pullback")
                if renamed is None:
                    raise
                raise renamed from error

        # Tracebacks and reprs show the rule's own pullback name.
        pullback_skipping_zeros.__qualname__ = getattr(pullback, "__qualname__", "pullback")
        return y, pullback_skipping_zeros


def _pushforward(
    f: Any, rule: Any, takes_callable: bool, tangents: tuple[Any, ...], args: Any, kwargs: Any
) -> Any:
    """Run a forward rule; numpy's and scipy's errors are re-raised naming ``f``'s pushforward."""
    try:
        if takes_callable:
            return rule(tangents, f, *args, **kwargs)
        return rule(tangents, *args, **kwargs)
    except Exception as error:
        renamed = renamed_error(error, f, " pushforward")
        if renamed is None:
            raise
        raise renamed from error


class _ForwardRules(RuleTable):
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self._lanes: dict[Any, Rule] = {}

    def register_lane(self, f: Any) -> Callable[[Rule], Rule]:
        """Decorator registering a lane of ``f``'s forward rule: a cheaper rule for common calls.

        The lane is called first, with the tangents and arguments as given and none of the
        registry's checks; it returns ``(y, y_dot)`` for a call it recognises itself as fully
        plain (typically: every argument and tangent an ndarray of one dtype and shape), and
        ``None`` for any other call, which then goes through the checks to the rule. It saves a
        4x4 pushforward a microsecond of checks that its own tests repeat.
        """

        def decorator(lane: Rule) -> Rule:
            self._lanes[f] = lane
            return lane

        return decorator

    def register(self, f: Any, *, override: bool = False) -> Callable[[Rule], Rule]:
        """:meth:`RuleTable.register`; a rule that replaces another also drops that rule's lane.

        A lane shortcuts the rule it was registered with: left in place, it would answer plain
        calls in the replaced rule's stead, and the new rule would never see them.
        """
        register = super().register(f, override=override)

        def decorator(rule: Rule) -> Rule:
            replaces = f in self._by_function
            register(rule)
            if replaces:
                self._lanes.pop(f, None)
            return rule

        return decorator

    def unregister(self, f: Any) -> None:
        self._lanes.pop(f, None)
        super().unregister(f)

    def __call__(self, tangents: Any, f: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any] | None:
        """Apply the forward rule of ``f``: ``(y, y_dot)``, or ``None`` if there is none."""
        try:
            lane = self._lanes.get(f)  # only functions with a rule have a lane
        except TypeError:  # unhashable callable object: lookup() tries the other tables
            lane = None
        if lane is not None and type(tangents) is tuple:
            # _pushforward's call, inlined: a 4x4 pushforward's whole cost is a few microseconds
            try:
                result = lane(tangents, *args, **kwargs)
            except Exception as error:
                renamed = renamed_error(error, f, " pushforward")
                if renamed is None:
                    raise
                raise renamed from error
            if result is not None:
                return result
        try:
            rule = self._by_function.get(f)
        except TypeError:
            rule = None
        if (
            rule is not None
            and type(tangents) is tuple
            and len(tangents) == len(args) + 1
            and plain_tangents(tangents, args)
        ):
            # the hot case: a plain function, every check below passes and nothing is
            # converted (plain arrays are neither zeros, nor object arrays, nor foreign)
            return _pushforward(f, rule, False, tangents, args, kwargs)
        found = self.lookup(f)
        if found is None:
            return None
        if not isinstance(tangents, tuple) or len(tangents) != len(args) + 1:
            got = len(tangents) if isinstance(tangents, tuple) else type(tangents).__name__
            raise ValueError(
                f"frule for {function_name(f)} needs a tuple of {len(args) + 1} tangents "
                f"(f_dot, one per positional argument), got {got}"
            )
        rule, takes_callable = found
        if plain_tangents(tangents, args):
            # the hot case: every check below passes and nothing is converted (plain arrays
            # are neither zeros, nor object arrays, nor another library's arrays)
            return _pushforward(f, rule, takes_callable, tangents, args, kwargs)
        tangents = _none_as_zero(tangents)
        bad = object_input(args)
        if bad is not None:
            raise object_input_error(function_name(f), bad)
        tangents = check_tangents(f, tangents, args)
        if all(isinstance(t, AbstractZero) for t in tangents):
            # The primal still comes from the rule set, so that its checks of the arguments
            # (refused options, structured inputs) and its forward computation apply unchanged.
            reverse = rrule(f, *args, **kwargs) if f in rrule else None
            return (f(*args, **kwargs) if reverse is None else reverse[0]), ZeroTangent()
        lifted = deferred.foreign_module(args) if deferred.FOREIGN else None
        if lifted is not None:
            return lifted.lifted_frule(tangents, f, args, kwargs)
        return _pushforward(f, rule, takes_callable, tangents, args, kwargs)


rrule = _ReverseRules("rrule")
frule = _ForwardRules("frule")
