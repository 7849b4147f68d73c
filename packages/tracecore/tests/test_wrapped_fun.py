"""WrappedFun: transformation stacks, stores, debug info and the cache."""

import pytest

from modjax.tracecore.tree_util import tree_flatten
from modjax.tracecore.wrapped_fun import (
    Store,
    cache,
    debug_info,
    flatten_fun,
    flatten_fun_nokwargs,
    wrap_init,
)


def scale(call, factor, *args):
    return [factor * y for y in call(*args)]


def add_one(call, *args):
    return [y + 1 for y in call(*args)]


def test_transforms_apply_innermost_first():
    fun = wrap_init(lambda x: [x]).wrap(scale, 10).wrap(add_one)
    assert fun.call_wrapped(2) == [21]
    fun = wrap_init(lambda x: [x]).wrap(add_one).wrap(scale, 10)
    assert fun.call_wrapped(2) == [30]


def test_flatten_fun_reports_the_output_tree():
    args, in_tree = tree_flatten(((1, {"a": 2}), {"k": 3}))
    fun, out_tree = flatten_fun(
        wrap_init(lambda x, d, k: {"s": x + d["a"] + k, "t": (k,)}), in_tree
    )
    assert not out_tree
    assert fun.call_wrapped(*args) == [6, 3]
    assert out_tree.val == tree_flatten({"s": 0, "t": (0,)})[1]


def test_flatten_fun_nokwargs():
    args, in_tree = tree_flatten(([1, 2],))
    fun, out_tree = flatten_fun_nokwargs(wrap_init(lambda xs: (xs[1], xs[0])), in_tree)
    assert fun.call_wrapped(*args) == [2, 1]


def test_store_is_write_once_and_must_be_filled():
    store = Store()
    with pytest.raises(RuntimeError, match="empty"):
        _ = store.val
    store.store(1)
    with pytest.raises(RuntimeError, match="already"):
        store.store(2)


def test_equality_ignores_stores_but_not_params():
    def f(x):
        return [x]

    _, tree = tree_flatten(((1,), {}))
    a, _ = flatten_fun(wrap_init(f), tree)
    b, _ = flatten_fun(wrap_init(f), tree)
    assert a == b and hash(a) == hash(b)
    assert wrap_init(f).wrap(scale, 2) != wrap_init(f).wrap(scale, 3)


def test_cache_computes_once_and_refills_stores():
    calls = []

    @cache
    def trace(fun, n):
        calls.append(n)
        return fun.call_wrapped(n)

    def f(x):
        return {"v": x * 2}

    _, tree = tree_flatten(((0,), {}))
    first, store1 = flatten_fun(wrap_init(f), tree)
    second, store2 = flatten_fun(wrap_init(f), tree)
    assert trace(first, 4) == [8]
    assert trace(second, 4) == [8]
    assert calls == [4]
    assert store2.val == store1.val
    third, _ = flatten_fun(wrap_init(f), tree)
    assert trace(third.wrap(add_one), 4) == [9]
    assert calls == [4, 4]


def test_debug_info_names_flat_arguments():
    def f(params, x, *, scale, n):
        return x

    info = debug_info(f, ({"w": 1, "b": 2}, 3), {"scale": 4, "n": 5}, static_argnames=("n",))
    assert info.func_name == "f"
    assert info.arg_names == ("params['b']", "params['w']", "x", "scale")
    assert info.describe_arg(2) == "argument x"
    assert info.func_src_info.endswith(f":{f.__code__.co_firstlineno}")
