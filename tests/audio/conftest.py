"""Make ``paddle_hl.audio`` this checkout's ``audio/`` folder.

``paddle_hl`` maps the domain folders of a source checkout into its namespace, but an editable
install of another checkout can claim ``paddle_hl.audio`` first (its finder precedes the
source-tree one on ``sys.meta_path``). The tests must exercise the code beside them, so when
``paddle_hl.audio`` would come from elsewhere, it is loaded from here. Where the checkout is the
installed one this does nothing.
"""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]

SHIM = f"""
import importlib.util as _u, os as _os, sys as _sys
_root = {str(ROOT)!r}
_init = _os.path.join(_root, "audio", "__init__.py")
_spec = _u.find_spec("paddle_hl.audio")
if _spec is None or _os.path.realpath(_spec.origin or "") != _os.path.realpath(_init):
    _spec = _u.spec_from_file_location("paddle_hl.audio", _init,
                                       submodule_search_locations=[_os.path.dirname(_init)])
    _mod = _u.module_from_spec(_spec)
    _sys.modules["paddle_hl.audio"] = _mod
    _spec.loader.exec_module(_mod)
"""

exec(compile(SHIM, __file__, "exec"))
