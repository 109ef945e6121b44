"""python/perseus/_perseus.pyi, the type stub editors and type checkers read,
declares every function and method of the native module with the native
signature's parameter names (pybind11 writes the signature on each
docstring's first line)."""
import ast
import inspect
import os
import re

import perseus._perseus as native

STUB = os.path.join(os.path.dirname(native.__file__), "_perseus.pyi")


def _stub_signatures():
    tree = ast.parse(open(STUB, encoding="utf-8").read())
    found = {}

    def args_of(fn):
        return [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs if a.arg != "self"]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = args_of(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[node.name + "." + item.name] = args_of(item)
    return found


def _native_parameters(obj, name):
    """Parameter names from pybind11's docstring signature "name(a: int, b: str = '') -> ..."."""
    doc = (getattr(obj, "__doc__", None) or "").strip()
    first = doc.splitlines()[0] if doc else ""
    match = re.match(r"^%s\((.*)\) ->" % re.escape(name), first)
    if match is None:
        return None  # overloaded, or not a pybind11 function
    names = re.findall(r"(?:^|, )(\w+)(?=: )", match.group(1))
    return [n for n in names if n != "self"]


def _native_callables():
    for name, obj in vars(native).items():
        if name.startswith("__") or name == "_warning_sink":
            continue
        if inspect.isclass(obj):
            for member, fn in vars(obj).items():
                if member.startswith("__") and member not in ("__init__", "__enter__"):
                    continue
                if callable(fn) and type(fn).__name__ in ("instancemethod", "builtin_function_or_method"):
                    yield name + "." + member, fn, member
        elif callable(obj):
            yield name, obj, name


def test_every_native_function_is_in_the_stub_with_its_parameters():
    stub = _stub_signatures()
    missing, differing = [], []
    for full_name, fn, short in _native_callables():
        params = _native_parameters(fn, short)
        if params is None:
            continue
        if full_name not in stub:
            missing.append(full_name)
        elif full_name.split(".")[-1] != "__init__" and stub[full_name] != params:
            differing.append("%s: stub %s, module %s" % (full_name, stub[full_name], params))
    assert not missing, "not in _perseus.pyi: %s" % missing
    assert not differing, "\n".join(differing)
