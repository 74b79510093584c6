# SPDX-License-Identifier: MIT
"""A stand-in for hydra._internal.config_loader_impl.ConfigLoaderImpl
(hydra-core 1.3): only _apply_overrides_to_config, for plain `key=value`
overrides, which Hydra applies as

    OmegaConf.update(cfg, key, value, merge=True)

raising ConfigCompositionException("Could not override '<key>'. ...") when
OmegaConf reports a missing key.
"""

from omegaconf import OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError


class ConfigCompositionException(Exception):
    pass


class ConfigLoaderImpl:
    @staticmethod
    def _apply_overrides_to_config(overrides, cfg):
        for override in overrides:
            key = override.key_or_group
            value = override.value()
            try:
                OmegaConf.update(cfg, key, value, merge=True)
            except (ConfigAttributeError, ConfigKeyError) as ex:
                raise ConfigCompositionException(
                    f"Could not override '{key}'.\nTo append to your config use +{override.input_line}"
                ) from ex
