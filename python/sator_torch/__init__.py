"""sator_torch: the PyTorch side of sator (docs/bridge.md).

- export / capture: the joint graph torch.compile hands Inductor, as a sator.graph file;
- load: a sator.graph file (sator's own output too) as a torch.fx.GraphModule;
- InductorPass: sator as Inductor's joint_custom_pre_pass inside torch.compile;
- backend: torch.compile(model, backend="sator") (registered by pip install; docs/install.md);
- find_sator / describe: which binary it runs (`python3 -m sator_torch --check`).

Only torch is needed; nothing is imported until used.
"""


import importlib

# Each public name and the submodule that defines it (None: the submodule
# itself). Submodules are imported by importlib, never by `from . import X`:
# that statement first asks this module for X, and for a name that is a
# submodule's own (`backend`) the question came back here, recursing until
# Python gave up (`from sator_torch import backend`).
_FROM = {
    "load": ("loader", "load"),
    "example_inputs": ("loader", "example_inputs"),
    "LoadError": ("loader", "LoadError"),
    "InductorPass": ("inductor_pass", "InductorPass"),
    "backend": ("backend", None),
    "find_sator": ("binary", "find_sator"),
    "describe": ("binary", "describe"),
    "capture": ("export", "capture"),
    "graph_to_doc": ("graph_doc", "graph_to_doc"),
}


def __getattr__(name):
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    submodule, attr = _FROM[name]
    module = importlib.import_module(f"{__name__}.{submodule}")
    return module if attr is None else getattr(module, attr)
