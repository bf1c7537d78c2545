"""wanka: blueprint -> cluster model -> artifacts for Huawei Ascend NPU training clusters."""

__version__ = "0.1.0"
