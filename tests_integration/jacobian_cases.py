"""The cases of test_jacobians.py, written once for JAX and for modjax.

``make_cases(jax)`` takes the top-level module (modjax here; JAX 0.10.2 in the script that
recorded jacobians_reference.json, kept in that file under ``recorded_with``) and returns
``{name: thunk}``; ``outcome(jax, thunk)`` runs one and encodes what it gave as JSON: the
pytree of results (structure, dict key order, dtype, shape, weak type and values of each
array leaf) or the exception's class and first line. This module never imports JAX, so the
same table runs on both sides.
"""

from __future__ import annotations

import numpy as np

# --- encoding ------------------------------------------------------------------------------------


def encode(jax, x):
    """Encode a result pytree as JSON-able data (see the module docstring)."""
    if x is None:
        return None
    if isinstance(x, dict):
        return {"dict": [[k, encode(jax, v)] for k, v in x.items()]}
    if isinstance(x, tuple | list):
        return {type(x).__name__: [encode(jax, v) for v in x]}
    if isinstance(x, bool | int | float | str):
        return {"py": [type(x).__name__, x]}
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        dtype = np.dtype(x.dtype)
        weak = bool(getattr(x, "weak_type", False))
        kind = type(x).__name__ if isinstance(x, np.ndarray) else "Array"
        if dtype == jax.dtypes.float0:
            data = None
        else:
            arr = np.asarray(x)
            if np.issubdtype(arr.dtype, np.complexfloating):
                data = [np.real(arr).tolist(), np.imag(arr).tolist()]
            else:
                data = arr.astype(np.float64 if arr.dtype.kind == "V" else arr.dtype).tolist()
                if dtype.kind not in "biuf":  # bfloat16 and friends
                    data = arr.astype(np.float64).tolist()
        return {"array": [kind, str(dtype), list(x.shape), weak, data]}
    if callable(x):
        return {"callable": [getattr(x, "__name__", None), getattr(x, "__doc__", None)]}
    raise TypeError(f"cannot encode {type(x)}")


def outcome(jax, thunk):
    """Run ``thunk`` and encode its result, or the class and first line of its error."""
    try:
        return {"ok": encode(jax, thunk())}
    except Exception as e:  # noqa: BLE001 - every error class is part of the answer
        return {"error": [type(e).__name__, str(e).split("\n")[0]]}


# --- the cases -----------------------------------------------------------------------------------


def make_cases(jax):
    """Return ``{name: thunk}``: each thunk calls the Jacobian API of ``jax`` one way."""
    jnp, lax = jax.numpy, jax.lax
    jacfwd, jacrev, jacobian, hessian = jax.jacfwd, jax.jacrev, jax.jacobian, jax.hessian

    x3 = jnp.array([0.5, -1.0, 2.0], jnp.float32)
    m23 = jnp.array([[0.5, 1.0, -0.5], [2.0, -1.5, 0.25]], jnp.float32)
    z3 = jnp.array([1 + 2j, -0.5j, 3.0], jnp.complex64)

    def poly(x):
        return jnp.stack([x[0] * x[1], jnp.sin(x[2]) * x[0], x[1] ** 3])

    def two(x, y):
        return jnp.tanh(x) * y[0] + jnp.sum(y)

    def tree_in(p):
        return jnp.sum(p["w"] @ p["b"]) * p["s"] + jnp.sum(p["t"][0] ** 2)

    def tree_out(x):
        return {"b": x * 2.0, "a": (jnp.sum(x**2), None, [jnp.cos(x[0])])}

    params = {
        "w": m23,
        "b": x3,
        "s": jnp.float32(1.5),
        "t": (jnp.array([1.0, 2.0], jnp.float32), None),
    }

    def with_aux(x):
        return jnp.sin(x) * x, {"mean": jnp.mean(x), "n": 3, "nothing": None}

    def scan_fn(x):
        def body(c, xi):
            c = jnp.tanh(c * xi + 0.5)
            return c, c * c

        c, ys = lax.scan(body, x[0], x)
        return ys + c

    def while_fn(x):
        return lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.5), (0, x)
        )[1]

    def fori_fn(x):
        return lax.fori_loop(0, 3, lambda i, c: c * jnp.cos(c) + i, x)

    def cond_fn(x):
        return lax.cond(jnp.sum(x) > 0, lambda v: v**2, lambda v: -v, x)

    def gen(x):
        yield x

    def documented(x):
        """A documented function."""
        return x

    cases = {
        # --- shapes: out.shape + in.shape ---------------------------------------------------
        "fwd_vec": lambda: jacfwd(poly)(x3),
        "rev_vec": lambda: jacrev(poly)(x3),
        "jacobian_alias": lambda: jacobian(poly)(x3),
        "fwd_matrix_in": lambda: jacfwd(lambda m: jnp.sin(m).sum(0))(m23),
        "rev_matrix_in": lambda: jacrev(lambda m: jnp.sin(m).sum(0))(m23),
        "fwd_matrix_out": lambda: jacfwd(lambda x: jnp.outer(x, x))(x3),
        "rev_matrix_out": lambda: jacrev(lambda x: jnp.outer(x, x))(x3),
        "fwd_scalar_in_out": lambda: jacfwd(lambda x: x**3)(jnp.float32(2.0)),
        "rev_scalar_in_out": lambda: jacrev(lambda x: x**3)(jnp.float32(2.0)),
        "fwd_0d_in_vec_out": lambda: jacfwd(lambda x: jnp.array([x, 2 * x, x * x]))(
            jnp.float32(1.5)
        ),
        "rev_0d_in_vec_out": lambda: jacrev(lambda x: jnp.array([x, 2 * x, x * x]))(
            jnp.float32(1.5)
        ),
        "fwd_reduce_to_0d": lambda: jacfwd(lambda m: jnp.sum(m**2))(m23),
        "rev_reduce_to_0d": lambda: jacrev(lambda m: jnp.sum(m**2))(m23),
        "fwd_zero_size_in": lambda: jacfwd(lambda x: x * 2.0)(jnp.zeros((2, 0))),
        "rev_zero_size_in": lambda: jacrev(lambda x: x * 2.0)(jnp.zeros((2, 0))),
        "fwd_zero_size_sum": lambda: jacfwd(lambda x: jnp.sum(x))(jnp.zeros((0, 3))),
        "rev_zero_size_sum": lambda: jacrev(lambda x: jnp.sum(x))(jnp.zeros((0, 3))),
        "fwd_zero_size_out": lambda: jacfwd(lambda x: x[:0])(x3),
        "rev_zero_size_out": lambda: jacrev(lambda x: x[:0])(x3),
        "rev_constant_out": lambda: jacrev(lambda x: jnp.ones(2))(x3),
        "fwd_constant_out": lambda: jacfwd(lambda x: jnp.ones(2))(x3),
        "fwd_python_constant_out": lambda: jacfwd(lambda x: 2.0)(x3),
        "rev_python_constant_out": lambda: jacrev(lambda x: 2.0)(x3),
        "rev_ignores_input": lambda: jacrev(lambda x, y: y * 2.0, argnums=0)(x3, x3),
        # --- Python scalars and weak types ------------------------------------------------
        "fwd_py_float": lambda: jacfwd(lambda x: x * x)(3.0),
        "rev_py_float": lambda: jacrev(lambda x: x * x)(3.0),
        "fwd_py_float_to_array": lambda: jacfwd(lambda x: x * x3)(3.0),
        "rev_py_float_to_array": lambda: jacrev(lambda x: x * x3)(3.0),
        "fwd_weak_and_strong": lambda: jacfwd(lambda a, b: a * b, argnums=(0, 1))(2.0, x3),
        "rev_weak_and_strong": lambda: jacrev(lambda a, b: a * b, argnums=(0, 1))(2.0, x3),
        "fwd_weak_array": lambda: jacfwd(lambda x: x + 1)(jnp.asarray(2.0)),
        # --- dtypes -------------------------------------------------------------------------
        "fwd_float16": lambda: jacfwd(lambda x: x * x)(jnp.array([1.0, 2.0], jnp.float16)),
        "rev_float16": lambda: jacrev(lambda x: x * x)(jnp.array([1.0, 2.0], jnp.float16)),
        "fwd_bfloat16": lambda: jacfwd(lambda x: jnp.sin(x))(jnp.array([1.0, 2.0], jnp.bfloat16)),
        "rev_bfloat16": lambda: jacrev(lambda x: jnp.sin(x))(jnp.array([1.0, 2.0], jnp.bfloat16)),
        "fwd_mixed_precisions": lambda: jacfwd(lambda a, b: a * b, argnums=(0, 1))(
            jnp.ones(2, jnp.float16), x3[:2]
        ),
        "rev_mixed_precisions": lambda: jacrev(lambda a, b: a * b, argnums=(0, 1))(
            jnp.ones(2, jnp.float16), x3[:2]
        ),
        "fwd_out_float16_in_float32": lambda: jacfwd(lambda x: (x * 3).astype(jnp.float16))(x3),
        "rev_out_float16_in_float32": lambda: jacrev(lambda x: (x * 3).astype(jnp.float16))(x3),
        "fwd_int_output": lambda: jacfwd(lambda x: jnp.round(x).astype(jnp.int32))(x3),
        "rev_int_output": lambda: jacrev(lambda x: jnp.round(x).astype(jnp.int32))(x3),
        "fwd_bool_output": lambda: jacfwd(lambda x: x > 0)(x3),
        "fwd_mixed_outputs": lambda: jacfwd(lambda x: (x * 2, jnp.argmax(x)))(x3),
        # --- integer and boolean inputs, allow_int -----------------------------------------
        "fwd_int_input": lambda: jacfwd(lambda x: x * 2.0)(jnp.arange(3)),
        "fwd_py_int_input": lambda: jacfwd(lambda x: x * 2.0)(3),
        "rev_int_input": lambda: jacrev(lambda x: x * 2.0)(jnp.arange(3)),
        "rev_bool_input": lambda: jacrev(lambda x: x * 2.0)(jnp.array([True, False])),
        "rev_allow_int": lambda: jacrev(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(
            x3, jnp.arange(3)
        ),
        "rev_allow_int_py": lambda: jacrev(lambda n: n * 2.0, allow_int=True)(3),
        "rev_allow_int_bool": lambda: jacrev(lambda b: jnp.where(b, 1.0, 2.0), allow_int=True)(
            jnp.array([True, False])
        ),
        "rev_allow_int_uint8": lambda: jacrev(
            lambda n: n.astype(jnp.float32) * 2.0, allow_int=True
        )(jnp.arange(2, dtype=jnp.uint8)),
        "jacobian_allow_int": lambda: jacobian(lambda n: n * 1.0, allow_int=True)(jnp.arange(2)),
        "hessian_int_input": lambda: hessian(lambda x: jnp.sum(x * 1.0))(jnp.arange(2)),
        # --- complex: holomorphic and its errors -------------------------------------------
        "fwd_complex_input": lambda: jacfwd(lambda z: z * z)(z3),
        "rev_complex_input_real_out": lambda: jacrev(lambda z: jnp.abs(z) ** 2)(z3),
        "rev_complex_output": lambda: jacrev(lambda z: z * z)(z3),
        "rev_real_in_complex_out": lambda: jacrev(lambda x: x * (1 + 1j))(x3),
        "fwd_real_in_complex_out": lambda: jacfwd(lambda x: x * (1 + 1j))(x3),
        "fwd_holomorphic": lambda: jacfwd(lambda z: z * jnp.sin(z), holomorphic=True)(z3),
        "rev_holomorphic": lambda: jacrev(lambda z: z * jnp.sin(z), holomorphic=True)(z3),
        "fwd_holomorphic_scalar": lambda: jacfwd(lambda z: z**3, holomorphic=True)(1.0 + 1j),
        "rev_holomorphic_scalar": lambda: jacrev(lambda z: z**3, holomorphic=True)(1.0 + 1j),
        "hessian_holomorphic": lambda: hessian(lambda z: jnp.sum(z**3), holomorphic=True)(z3),
        "fwd_holomorphic_real_input": lambda: jacfwd(lambda z: z * z, holomorphic=True)(x3),
        "rev_holomorphic_real_input": lambda: jacrev(lambda z: z * z, holomorphic=True)(x3),
        "fwd_holomorphic_real_output": lambda: jacfwd(jnp.abs, holomorphic=True)(z3),
        "rev_holomorphic_real_output": lambda: jacrev(jnp.abs, holomorphic=True)(z3),
        "rev_holomorphic_int_input": lambda: jacrev(lambda z: z * 1j, holomorphic=True)(
            jnp.arange(2)
        ),
        "fwd_holomorphic_complex128_py": lambda: jacfwd(lambda z: z * 2, holomorphic=True)(2j),
        # --- pytrees -------------------------------------------------------------------------
        "fwd_dict_in": lambda: jacfwd(tree_in)(params),
        "rev_dict_in": lambda: jacrev(tree_in)(params),
        "fwd_tree_out": lambda: jacfwd(tree_out)(x3),
        "rev_tree_out": lambda: jacrev(tree_out)(x3),
        "fwd_tree_to_tree": lambda: jacfwd(lambda p: {"y": p["b"] * p["s"], "z": p["w"]})(params),
        "rev_tree_to_tree": lambda: jacrev(lambda p: {"y": p["b"] * p["s"], "z": p["w"]})(params),
        "fwd_list_in": lambda: jacfwd(lambda xs: xs[0] * xs[1])([x3, x3 + 1]),
        "rev_list_in": lambda: jacrev(lambda xs: xs[0] * xs[1])([x3, x3 + 1]),
        "fwd_tuple_out": lambda: jacfwd(lambda x: (x, jnp.sum(x)))(x3),
        "rev_tuple_out": lambda: jacrev(lambda x: (x, jnp.sum(x)))(x3),
        "fwd_none_out": lambda: jacfwd(lambda x: None)(x3),
        "rev_none_out": lambda: jacrev(lambda x: None)(x3),
        "fwd_none_in_leaf": lambda: jacfwd(lambda t: t[0] * 2.0)((x3, None)),
        "rev_none_in_leaf": lambda: jacrev(lambda t: t[0] * 2.0)((x3, None)),
        "fwd_empty_dict_in": lambda: jacfwd(lambda d, x: x * 2.0, argnums=(0, 1))({}, x3),
        "rev_empty_dict_in": lambda: jacrev(lambda d, x: x * 2.0, argnums=(0, 1))({}, x3),
        "fwd_all_none_input": lambda: jacfwd(lambda t: x3)((None,)),
        "rev_nested_out_nested_in": lambda: jacrev(lambda p: [{"u": p[0]["a"] * p[1]}, p[1] ** 2])(
            ({"a": x3}, jnp.float32(2.0))
        ),
        "fwd_nested_out_nested_in": lambda: jacfwd(lambda p: [{"u": p[0]["a"] * p[1]}, p[1] ** 2])(
            ({"a": x3}, jnp.float32(2.0))
        ),
        # --- argnums -------------------------------------------------------------------------
        "fwd_argnums_int": lambda: jacfwd(two, argnums=1)(x3, x3),
        "rev_argnums_int": lambda: jacrev(two, argnums=1)(x3, x3),
        "fwd_argnums_tuple": lambda: jacfwd(two, argnums=(0, 1))(x3, x3),
        "rev_argnums_tuple": lambda: jacrev(two, argnums=(0, 1))(x3, x3),
        "fwd_argnums_list": lambda: jacfwd(two, argnums=[1, 0])(x3, x3),
        "rev_argnums_list": lambda: jacrev(two, argnums=[1, 0])(x3, x3),
        "fwd_argnums_one_tuple": lambda: jacfwd(two, argnums=(1,))(x3, x3),
        "rev_argnums_one_tuple": lambda: jacrev(two, argnums=(1,))(x3, x3),
        "fwd_argnums_negative": lambda: jacfwd(two, argnums=-1)(x3, x3),
        "rev_argnums_negative": lambda: jacrev(two, argnums=-2)(x3, x3),
        "rev_argnums_negative_tuple": lambda: jacrev(two, argnums=(-1, 0))(x3, x3),
        "fwd_argnums_np_int": lambda: jacfwd(two, argnums=np.int64(1))(x3, x3),
        "rev_argnums_np_int": lambda: jacrev(two, argnums=np.int64(1))(x3, x3),
        "hessian_argnums_np_int": lambda: hessian(lambda x: jnp.sum(x**3), argnums=np.int32(0))(x3),
        "fwd_argnums_too_big": lambda: jacfwd(two, argnums=2)(x3, x3),
        "rev_argnums_too_big": lambda: jacrev(two, argnums=(0, 2))(x3, x3),
        "fwd_argnums_too_negative": lambda: jacfwd(two, argnums=-3)(x3, x3),
        "rev_argnums_too_negative": lambda: jacrev(two, argnums=-3)(x3, x3),
        "rev_argnums_keyword_arg": lambda: jacrev(two)(x=x3, y=x3),
        "fwd_argnums_keyword_arg": lambda: jacfwd(two, argnums=1)(x3, y=x3),
        "rev_static_kwargs": lambda: jacrev(lambda x, scale=1.0: x * scale)(x3, scale=3.0),
        "fwd_argnums_str": lambda: jacfwd(two, argnums="a"),
        "rev_argnums_str": lambda: jacrev(two, argnums="a"),
        "rev_argnums_str_called": lambda: jacrev(two, argnums="a")(x3, x3),
        "fwd_argnums_float": lambda: jacfwd(two, argnums=1.0),
        "rev_argnums_float_called": lambda: jacrev(two, argnums=1.0)(x3, x3),
        "fwd_argnums_none": lambda: jacfwd(two, argnums=None),
        "hessian_argnums_str": lambda: hessian(two, argnums="a"),
        "fwd_argnums_empty": lambda: jacfwd(two, argnums=())(x3, x3),
        "rev_argnums_empty": lambda: jacrev(two, argnums=())(x3, x3),
        "rev_argnums_repeated": lambda: jacrev(two, argnums=(0, 0))(x3, x3),
        "fwd_argnums_repeated": lambda: jacfwd(two, argnums=(1, 1))(x3, x3),
        # --- has_aux -------------------------------------------------------------------------
        "fwd_has_aux": lambda: jacfwd(with_aux, has_aux=True)(x3),
        "rev_has_aux": lambda: jacrev(with_aux, has_aux=True)(x3),
        "hessian_has_aux": lambda: hessian(lambda x: (jnp.sum(x**3), {"x": x}), has_aux=True)(x3),
        "rev_has_aux_argnums": lambda: jacrev(
            lambda x, y: (x * y, y), argnums=(0, 1), has_aux=True
        )(x3, x3),
        "rev_has_aux_not_pair": lambda: jacrev(lambda x: (x, x, x), has_aux=True)(x3),
        "fwd_has_aux_not_pair": lambda: jacfwd(lambda x: (x, x, x), has_aux=True)(x3),
        "fwd_has_aux_array_pair": lambda: jacfwd(lambda x: jnp.stack([x * x, x]), has_aux=True)(x3),
        "rev_has_aux_array_pair": lambda: jacrev(lambda x: jnp.stack([x * x, x]), has_aux=True)(x3),
        "fwd_has_aux_list_pair": lambda: jacfwd(lambda x: [x * 2, x], has_aux=True)(x3),
        "rev_has_aux_list_pair": lambda: jacrev(lambda x: [x * 2, x], has_aux=True)(x3),
        # --- bad inputs ----------------------------------------------------------------------
        "fwd_not_callable": lambda: jacfwd(3),
        "rev_not_callable": lambda: jacrev("f"),
        "jacobian_not_callable": lambda: jacobian(None),
        "hessian_not_callable": lambda: hessian([1]),
        "fwd_generator_function": lambda: jacfwd(gen),
        "rev_generator_function": lambda: jacrev(gen),
        "fwd_staticmethod": lambda: jacfwd(staticmethod(poly)),
        "fwd_str_input": lambda: jacfwd(lambda x: x)("a"),
        "rev_str_input": lambda: jacrev(lambda x: x)("a"),
        "rev_none_output_leaf_str": lambda: jacrev(lambda x: "s")(x3),
        "fwd_object_output": lambda: jacfwd(lambda x: object())(x3),
        "rev_numpy_input": lambda: jacrev(lambda x: x * 2.0)(np.array([1.0, 2.0], np.float32)),
        "fwd_numpy_float64_input": lambda: jacfwd(lambda x: x * 2.0)(np.array([1.0, 2.0])),
        "rev_numpy_float64_input": lambda: jacrev(lambda x: x * 2.0)(np.array([1.0, 2.0])),
        "fwd_key_input": lambda: jacfwd(lambda k: 1.0)(jax.random.key(0)),
        "rev_key_input": lambda: jacrev(lambda k: 1.0)(jax.random.key(0)),
        "rev_key_input_allow_int": lambda: jacrev(lambda k: 1.0, allow_int=True)(jax.random.key(0)),
        "rev_key_output": lambda: jacrev(lambda x: jax.random.key(0))(x3),
        # --- names and docstrings ------------------------------------------------------------
        "fwd_wrapped_name_doc": lambda: jacfwd(documented),
        "rev_wrapped_name_doc": lambda: jacrev(documented, argnums=(0,)),
        "hessian_wrapped_name_doc": lambda: hessian(documented),
        "qualname": lambda: jacrev(documented).__qualname__.split(".")[-1],
        "wrapped_attribute": lambda: jacfwd(documented).__wrapped__ is documented,
        # --- compositions --------------------------------------------------------------------
        "jit_of_jacfwd": lambda: jax.jit(jacfwd(poly))(x3),
        "jit_of_jacrev_tree": lambda: jax.jit(jacrev(tree_in))(params),
        "vmap_of_jacrev": lambda: jax.vmap(jacrev(lambda x: jnp.sin(x) * jnp.sum(x)))(m23),
        "vmap_of_jacfwd": lambda: jax.vmap(jacfwd(lambda x: jnp.sin(x) * jnp.sum(x)))(m23),
        "vmap_of_jacrev_in_axes": lambda: jax.vmap(jacrev(two, argnums=1), in_axes=(None, 0))(
            x3, jnp.stack([x3, 2 * x3])
        ),
        "jacfwd_of_jacrev": lambda: jacfwd(jacrev(lambda x: jnp.sum(jnp.sin(x) * x**2)))(x3),
        "jacrev_of_jacfwd": lambda: jacrev(jacfwd(poly))(x3),
        "jacrev_of_jacrev": lambda: jacrev(jacrev(poly))(x3),
        "hessian_vec": lambda: hessian(lambda x: jnp.sum(jnp.sin(x) * x**2))(x3),
        "hessian_vec_out": lambda: hessian(poly)(x3),
        "hessian_tree": lambda: hessian(lambda p: {"c": p["a"] ** p["b"]})(
            {"a": jnp.array([1.0, 2.0]), "b": jnp.array([2.0, 3.0])}
        ),
        "hessian_argnums_tuple": lambda: hessian(lambda x, y: jnp.sum(x * x * y), argnums=(0, 1))(
            x3, x3
        ),
        "hessian_scalar": lambda: hessian(lambda x: x**4)(2.0),
        "jacfwd_of_grad": lambda: jacfwd(jax.grad(lambda x: jnp.sum(jnp.exp(x) * x)))(x3),
        "grad_of_jacrev_sum": lambda: jax.grad(lambda x: jnp.sum(jacrev(poly)(x)))(x3),
        "jacrev_of_jit": lambda: jacrev(jax.jit(poly))(x3),
        "jacfwd_of_vmap": lambda: jacfwd(jax.vmap(lambda r: jnp.sum(r**2)))(m23),
        # --- control flow -------------------------------------------------------------------
        "fwd_scan": lambda: jacfwd(scan_fn)(x3),
        "rev_scan": lambda: jacrev(scan_fn)(x3),
        "fwd_while_loop": lambda: jacfwd(while_fn)(x3),
        "rev_while_loop": lambda: jacrev(while_fn)(x3),
        "fwd_fori_loop": lambda: jacfwd(fori_fn)(x3),
        "rev_fori_loop": lambda: jacrev(fori_fn)(x3),
        "fwd_cond": lambda: jacfwd(cond_fn)(x3),
        "rev_cond": lambda: jacrev(cond_fn)(x3),
        "hessian_scan": lambda: hessian(lambda x: jnp.sum(scan_fn(x)))(x3),
        "jit_jacfwd_while": lambda: jax.jit(jacfwd(while_fn))(x3),
    }
    return cases


def make_x64_cases(jax):
    """Return the cases that need 64-bit types (run them under ``jax.enable_x64(True)``).

    Their arrays are made when a case runs, so the table itself can be made without x64.
    """
    jnp = jax.numpy

    def x():
        return jnp.array([0.5, -1.0, 2.0], jnp.float64)

    def f(v):
        return jnp.sin(v) * jnp.sum(v**2)

    return {
        "x64_fwd": lambda: jax.jacfwd(f)(x()),
        "x64_rev": lambda: jax.jacrev(f)(x()),
        "x64_hessian": lambda: jax.hessian(lambda v: jnp.sum(f(v)))(x()),
        "x64_py_float": lambda: jax.jacrev(lambda v: v * v)(3.0),
        "x64_mixed": lambda: jax.jacfwd(lambda a, b: a * b, argnums=(0, 1))(
            jnp.ones(3, jnp.float32), x()
        ),
        "x64_int64_input": lambda: jax.jacrev(lambda n: n * 1.0, allow_int=True)(jnp.arange(2)),
        "x64_complex128": lambda: jax.jacrev(lambda z: z * z, holomorphic=True)(
            jnp.array([1 + 1j, 2.0])
        ),
    }
