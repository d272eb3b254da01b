"""scipy, traceable: ``rules.autodiff.scipy.linalg.expm`` and so on.

numpy functions dispatch on their arguments' type, so the driver sees ``np.linalg.solve(A, b)``
on a traced ``A``; most scipy functions convert their inputs with ``np.asarray`` first and cannot
be seen. Each module here mirrors the scipy module of the same name: every function is a thin
wrapper that, on traced arguments, records one call of the scipy function through its registered
rule (the scipy function object is the registry key, so a rule added later is found with no
change here) and, on plain arguments, calls scipy itself. scipy's ufuncs (most of
``scipy.special``) are returned as they are: they dispatch by themselves. Objects with methods
(``scipy.stats.norm``) come wrapped so that their methods are traced the same way
(``rules.autodiff.scipy.stats.norm.logpdf(x)``).

Mirrors: ``linalg``, ``special``, ``signal``, ``fft``, ``stats``, ``sparse`` and
``sparse.linalg``; a new one is a five-line module calling
:func:`rules.autodiff.scipy.mirror.mirror`.
"""
