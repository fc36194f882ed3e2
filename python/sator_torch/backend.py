"""torch.compile(model, backend="sator"): Inductor with sator as its joint-graph pass.

    model = torch.compile(model, backend="sator")
    model = torch.compile(model, backend="sator", options={"chunk": "auto", "max_autotune": True})

`pip install .` registers this function as the `sator` backend (the
`torch_dynamo_backends` entry point); without the install,
`backend=sator_torch.backend.sator` does the same. It compiles exactly as
backend="inductor" does, with `InductorPass` as Inductor's
`joint_custom_pre_pass`.

options, the way Inductor's are given: a key InductorPass takes (chunk,
memory_budget, decline_without_gain, fuse_dropout, strict, device, extra, keep_dir,
timeout, verbose, sator, target) goes to the pass; any other key is an
Inductor config setting (`max_autotune`, `triton.cudagraphs`, ...), checked
as torch.compile checks them for backend="inductor". `mode` is Inductor's.

The pass made for a set of options is kept (`passes()`), so its reports
(one per graph: what sator did, or why it left the graph alone) can be read
after the compile.
"""
import inspect

from .inductor_pass import InductorPass

_PASS_KEYS = frozenset(p for p in inspect.signature(InductorPass.__init__).parameters if p != "self")
_passes = {}


def passes():
    """The InductorPass made for each distinct set of pass options, in order."""
    return list(_passes.values())


def _split(options):
    """(the pass's keyword arguments, Inductor's config patches) of `options`."""
    from torch._inductor import config

    known = config.get_config_copy()
    pass_args, patches = {}, {}
    for key, value in (options or {}).items():
        if key in _PASS_KEYS:
            pass_args[key] = value
            continue
        name = key.replace("-", "_")
        if name not in known:
            raise RuntimeError(f"sator backend: unknown option {key!r}: neither InductorPass's "
                               f"({', '.join(sorted(_PASS_KEYS))}) nor an Inductor config setting")
        patches[name] = value
    return pass_args, patches


def _pass_for(pass_args):
    key = repr(sorted((k, repr(v)) for k, v in pass_args.items()))
    if key not in _passes:
        _passes[key] = InductorPass(**pass_args)
    return _passes[key]


def sator(gm, example_inputs, mode=None, options=None):
    """The `sator` torch.compile backend (see the module's text)."""
    from torch._inductor.compile_fx import compile_fx

    pass_args, patches = _split(options)
    if mode and mode != "default":
        from torch._inductor import list_mode_options

        patches = {**list_mode_options(mode), **patches}
    if "joint_custom_pre_pass" in patches:
        raise RuntimeError("sator backend: joint_custom_pre_pass is the sator pass's own place; compose passes with "
                           "backend=\"inductor\" and your own joint_custom_pre_pass instead")
    patches["joint_custom_pre_pass"] = _pass_for(pass_args)
    return compile_fx(gm, example_inputs, config_patches=patches)
