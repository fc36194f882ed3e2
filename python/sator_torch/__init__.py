"""sator_torch: the PyTorch side of sator (docs/bridge.md).

- export / capture: the joint graph torch.compile hands Inductor, as a sator.graph file;
- load: a sator.graph file (sator's own output too) as a torch.fx.GraphModule;
- InductorPass: sator as Inductor's joint_custom_pre_pass inside torch.compile;
- backend: torch.compile(model, backend="sator") (registered by pip install; docs/install.md);
- find_sator / describe: which binary it runs (`python3 -m sator_torch --check`).

Only torch is needed; nothing is imported until used.
"""


def __getattr__(name):
    if name in ("load", "example_inputs", "LoadError"):
        from . import loader as _load
        return getattr(_load, name)
    if name == "InductorPass":
        from . import inductor_pass
        return inductor_pass.InductorPass
    if name == "backend":
        from . import backend
        return backend
    if name in ("find_sator", "describe"):
        from . import binary
        return getattr(binary, name)
    if name in ("capture",):
        from . import export
        return export.capture
    if name in ("graph_to_doc",):
        from . import graph_doc
        return graph_doc.graph_to_doc
    raise AttributeError(name)
