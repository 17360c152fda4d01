"""The ε-band's old public home, kept so that `from svmkit.band import HardBandSVR` still works:
the code lives in svmkit.models.band."""

from svmkit.models.band import (BandReduction, HardBandSVR, epsilon_inf, epsilon_inf_lp, hard_band_reduction,
                                soft_band_dual, soft_band_primal)

__all__ = ["HardBandSVR", "BandReduction", "epsilon_inf", "epsilon_inf_lp", "hard_band_reduction", "soft_band_primal",
           "soft_band_dual"]
