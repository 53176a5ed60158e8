"""factory: rejection-sampling SFT data for coding agents."""

__version__ = "0.1.0"
