"""The default protocol's custom type ErrorCode (the generator leaves a stub to fill in)."""

from enum import Enum
from typing import Any


class ErrorCode(Enum):
    """Why a message was refused; the values are ErrorCodeEnum's in default.proto."""

    UNSUPPORTED_PROTOCOL = 0
    DECODING_ERROR = 1
    INVALID_MESSAGE = 2
    UNSUPPORTED_SKILL = 3
    INVALID_DIALOGUE = 4

    @staticmethod
    def encode(error_code_protobuf_object: Any, error_code_object: "ErrorCode") -> None:
        """Writes the code into its protobuf wrapper."""
        error_code_protobuf_object.error_code = error_code_object.value

    @classmethod
    def decode(cls, error_code_protobuf_object: Any) -> "ErrorCode":
        """Reads the code from its protobuf wrapper."""
        return cls(error_code_protobuf_object.error_code)
