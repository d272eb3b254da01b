"""The library's rules inside PyTorch's and JAX's autodiff: ``rules.interop.torch``, ``.jax``.

``rules.interop.torch.wrap(f)`` and ``rules.interop.jax.wrap(f)`` turn any function that has an
``rrule`` (and, for forward mode, an ``frule``) into an operation of the peer whose derivatives
come from the rule, found through the registry at call time: a rule registered later works with
no further code. Ready namespaces mirror the peers' names (``rules.interop.torch.linalg``,
``rules.interop.jax.numpy.linalg``, ``rules.interop.jax.scipy.linalg``). See ``docs/interop.md``
for the conventions (zeros, complex numbers, non-differentiable outputs, devices).

Importing this package imports neither torch nor jax; only its ``torch`` and ``jax``
sub-packages do.
"""

__all__: list[str] = []
