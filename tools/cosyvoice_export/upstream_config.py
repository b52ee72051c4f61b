"""Reads upstream's hyperpyyaml model configs (examples/libritts/cosyvoice2/conf/cosyvoice2.yaml)
with plain PyYAML: hyperpyyaml is not in Debian, so its tags are turned into data here and the
modules are built by upstream_modules.py from those numbers (nothing is evaluated from the file
except `!ref` lookups and their products, e.g. `<chunk_size> * <token_mel_ratio>`)."""
import re

import yaml


class Tagged(dict):
    """A `!new:` / `!name:` / `!apply:` node: the dotted target and its keyword arguments."""

    def __init__(self, kind, target, kwargs):
        super().__init__(kwargs)
        self.kind = kind
        self.target = target


class Ref(str):
    pass


def _loader():
    class Loader(yaml.SafeLoader):
        pass

    def multi(kind):
        def construct(loader, suffix, node):
            if isinstance(node, yaml.MappingNode):
                kwargs = loader.construct_mapping(node, deep=True)
            elif isinstance(node, yaml.SequenceNode):
                kwargs = {"__args__": loader.construct_sequence(node, deep=True)}
            else:
                kwargs = {}
            return Tagged(kind, suffix, kwargs)
        return construct

    for kind in ("new", "name", "apply"):
        Loader.add_multi_constructor(f"!{kind}:", multi(kind))
    Loader.add_constructor("!ref", lambda loader, node: Ref(loader.construct_scalar(node)))
    return Loader


def _resolve(value, root):
    if isinstance(value, Ref):
        names = re.findall(r"<([^>]+)>", value)
        numbers = [_resolve(root[n], root) for n in names]
        if len(numbers) == 1 and value.strip() == f"<{names[0]}>":
            return numbers[0]
        product = 1
        for n in numbers:  # the only expression upstream's configs use is a product
            product *= n
        return product
    if isinstance(value, Tagged):
        out = Tagged(value.kind, value.target, {})
        for k, v in value.items():
            out[k] = _resolve(v, root)
        return out
    if isinstance(value, dict):
        return {k: _resolve(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, root) for v in value]
    return value


def load(path):
    with open(path) as f:
        raw = yaml.load(f, Loader=_loader())
    return {k: _resolve(v, raw) for k, v in raw.items()}
