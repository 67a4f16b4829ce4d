"""An IntEnum that accepts values it does not know."""

from __future__ import annotations

from enum import IntEnum


class OpenIntEnum(IntEnum):
    """IntEnum whose unknown values become members named UNKNOWN_<value>, and whose str() is
    the lower-case name ("warning", "sim"), as nubo's JSON and nubo-smi spell it.

    A newer libnubo_c.so may add values to an enum without changing its ABI version (additions
    are compatible by nubo's rules), so converting a value that this package does not know must
    not raise: the value is kept, only its name is generic.
    """

    @classmethod
    def _missing_(cls, value: object) -> OpenIntEnum | None:
        if not isinstance(value, int):
            return None
        member = int.__new__(cls, value)
        member._name_ = f"UNKNOWN_{value}"
        member._value_ = value
        # Cache it so that equal values stay identical members, as for the declared ones.
        return cls._value2member_map_.setdefault(value, member)  # type: ignore[return-value]

    # Python 3.11 made str() of an IntEnum the bare number; a name reads better in messages.
    def __str__(self) -> str:
        return self.name.lower()

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)
