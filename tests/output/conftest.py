from tests.output.fake_hub import fake_hub

__all__ = ["fake_hub"]
