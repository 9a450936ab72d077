"""shadegrad's warning classes (filter them with the warnings module)."""


class CompileWarning(UserWarning):
    """A module compiled, with warnings: the ones slangc gives for the same source, each with its
    location, the source line and a caret, and Slang's number (30081 for an implicit conversion
    that loses information, such as ``int3 v = float3(...)``). Silence them with
    ``warnings.filterwarnings("ignore", category=shadegrad.CompileWarning)``.
    """


class NotDifferentiableWarning(UserWarning):
    """A function without ``[Differentiable]`` was called with a tensor that requires grad.

    The call runs, but its result carries no gradient (no ``grad_fn``), so a later
    ``backward()`` cannot reach the tensor. shadegrad says so once per function, naming the
    function and the parameter; add ``[Differentiable]`` before the function's declaration to
    differentiate it. Silence it with::

        import warnings
        warnings.filterwarnings("ignore", category=shadegrad.NotDifferentiableWarning)
    """
