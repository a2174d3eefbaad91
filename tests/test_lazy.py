"""Packages' public names imported on first use (``coder_eval.lazy``)."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from coder_eval.lazy import lazy_names


def test_a_name_is_imported_on_first_use_and_kept() -> None:
    namespace: dict[str, object] = {}
    getattr_, dir_ = lazy_names("pkg", namespace, {"dumps": "json", "decoder": "json", "path": "os"})

    assert "dumps" not in namespace and dir_() == ["decoder", "dumps", "path"]
    import json

    assert getattr_("dumps") is json.dumps and namespace["dumps"] is json.dumps
    assert isinstance(getattr_("decoder"), types.ModuleType)  # a submodule of its module
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'nothing'"):
        getattr_("nothing")


def test_importing_a_package_imports_none_of_its_lazy_modules() -> None:
    script = (
        "import sys, coder_eval, coder_eval.store, coder_eval.run, coder_eval.analysis\n"
        "heavy = [m for m in ('duckdb', 'scipy', 'pandas', 'coder_eval.run.session') if m in sys.modules]\n"
        "print(heavy); coder_eval.store.RunStore; coder_eval.analysis.plots\n"
        "print('duckdb' in sys.modules, type(coder_eval.analysis.plots).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[]", "True module"]
