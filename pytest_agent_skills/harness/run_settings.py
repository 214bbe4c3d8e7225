"""How conversations run, the same for every one of a test session: :class:`RunSettings`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..redaction import Redactor
from ..request_params import checked_params
from .cassette import Upstream
from .turns import SCRIPTED_MODEL_NAME

if TYPE_CHECKING:
    from ..workspace import Runtime

TRANSPORTS = ("direct", "sdk", "sdk-stream")


@dataclass(frozen=True)
class RunSettings:
    """The session-wide half of a run (the other is the :class:`~.conversation.Conversation`):
    where commands run, how the model is reached, what is recorded and what is hidden.

    ``runtime`` runs the skills' commands (None: each conversation makes and closes a local
    one).  ``transport`` is how a script reaches the loop: ``direct`` (in process), ``sdk``
    (the ``openai`` client and the loopback server), ``sdk-stream`` (the same, streaming);
    cassettes always go through the loopback server.  ``record_mode`` and ``upstream`` say
    what a cassette records and from where.  ``secret_env`` names the variables whose values
    are redacted.  ``model_params`` are fields added to every request of the agent
    (``temperature``, ``seed``, ``max_tokens``...): sent, recorded and matched like the rest
    of the body.
    """

    runtime: Runtime | None = None
    transport: str = "direct"
    record_mode: str = "none"
    upstream: Upstream | None = None
    secret_env: Sequence[str] = ("OPENAI_API_KEY",)
    model_name: str = SCRIPTED_MODEL_NAME
    match_ignore: Sequence[str] = ()
    #: The skills' load mode: turn (the reference's default), once or session.
    load_mode: str = "turn"
    model_params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "secret_env", tuple(self.secret_env))
        object.__setattr__(self, "match_ignore", tuple(self.match_ignore))
        object.__setattr__(self, "model_params", checked_params(self.model_params))

    def redactor(self) -> Redactor:
        """What hides these settings' secrets in cassettes and in the messages shown."""
        secrets = self.upstream.secrets if self.upstream else ()
        return Redactor(self.secret_env, extra_values=secrets)
