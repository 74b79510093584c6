# Copyright (c) 2023, NVIDIA CORPORATION. All rights reserved.
import functools
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Tuple, Union


@dataclass
class ModuleSpec:
    """This is a Module Specification dataclass.

    Specification defines the location of the module (to import dynamically)
    or the imported module itself. It also defines the params that need to be
    passed to initialize the module.

    Args:
        module (Union[Tuple, type]): A tuple describing the location of the
            module class e.g. `(module.location, ModuleClass)` or the imported
            module class itself e.g. `ModuleClass` (which is already imported
            using `from module.location import ModuleClass`).
        params (dict): A dictionary of params that need to be passed while init.

    """

    module: Union[Tuple, type]
    params: dict = field(default_factory=lambda: {})
    submodules: object = None
    metainfo: dict = field(default_factory=lambda: {})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Builds an instance of the module from the spec.

        Args:
            *args: Positional arguments to be passed to the module init.
            **kwargs: Keyword arguments to be passed to the module init.
        """
        return build_module(self, *args, **kwargs)


def import_module(module_path: Tuple[str]):
    """Import a named object from a module in the context of this function.

    TODO: make this importer module more robust, at least make sure there
    are no side effects of using this as is
    """
    base_path, name = module_path
    try:
        module = __import__(base_path, globals(), locals(), [name])
    except ImportError as exc:
        raise ImportError(
            f"Could not import module '{base_path}' for spec '{name}': {exc}"
        ) from exc

    try:
        return vars(module)[name]
    except KeyError as exc:
        raise ImportError(f"Could not find spec '{name}' in module '{base_path}'") from exc


# pylint: disable=missing-function-docstring
def get_module(spec_or_module: Union[ModuleSpec, type], **additional_kwargs):
    """Returns or imports the provided module."""
    # If a module clas is already provided return it as is
    if isinstance(spec_or_module, (type, types.FunctionType)):
        return spec_or_module

    # If the module is provided instead of module path, then return it as is
    if isinstance(spec_or_module.module, (type, types.FunctionType)):
        return spec_or_module.module

    # Otherwise, return the dynamically imported module from the module path
    return import_module(spec_or_module.module)


def build_module(spec_or_module: Union[ModuleSpec, type], *args, **kwargs):
    """Builds an instance of the module from the spec.

    Args:
        spec_or_module: The module spec or module class to build.
        *args: Positional arguments to be passed to the module init.
        **kwargs: Keyword arguments to be passed to the module init.
    """
    # If the passed `spec_or_module` is
    # a `Function`, then return it as it is
    # NOTE: to support an already initialized module add the following condition
    # `or isinstance(spec_or_module, torch.nn.Module)` to the following if check
    if isinstance(spec_or_module, types.FunctionType):
        return spec_or_module

    # If the passed `spec_or_module` is actually a spec (instance of
    # `ModuleSpec`) and it specifies a `Function` using its `module`
    # field, return the `Function` as it is
    if isinstance(spec_or_module, ModuleSpec) and isinstance(
        spec_or_module.module, types.FunctionType
    ):
        return spec_or_module.module

    # Check if a module class is provided as a spec or if the module path
    # itself is a class
    if isinstance(spec_or_module, type):
        module = spec_or_module
    elif hasattr(spec_or_module, "module") and isinstance(spec_or_module.module, type):
        module = spec_or_module.module
    else:
        # Otherwise, dynamically import the module from the module path
        module = import_module(spec_or_module.module)

    # If the imported module is actually a `Function` return it as it is
    if isinstance(module, types.FunctionType):
        return module

    # Finally return the initialized module with params from the spec as well
    # as those passed as **kwargs from the code

    # Add the `submodules` argument to the module init call if it exists in the
    # spec.
    if hasattr(spec_or_module, "submodules") and spec_or_module.submodules is not None:
        kwargs["submodules"] = spec_or_module.submodules

    try:
        return module(
            *args, **spec_or_module.params if hasattr(spec_or_module, "params") else {}, **kwargs
        )
    except Exception as e:
        # improve the error message since we hide the module name in the line above
        import sys

        raise type(e)(f"{str(e)} when instantiating {module.__name__}").with_traceback(
            sys.exc_info()[2]
        )


def get_submodules(spec: Callable[..., Any]) -> object:
    """Gets the `submodules` field from the provided spec.

    Supports `partial` objects, as well as ModuleSpec or any other object with a `submodules` attr.
    Raises a ValueError if the provided spec is not supported.
    """
    if isinstance(spec, functools.partial):
        return spec.keywords['submodules']
    if hasattr(spec, "submodules"):
        return spec.submodules  # type: ignore
    raise ValueError(f"Could not find `submodules` in the provided spec: {spec!r}")
