"""Secret redaction for captured commands and outputs: applied before anything is stored."""

from __future__ import annotations

import re

MARK = "[REDACTED]"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Bearer / token authorization headers.
    (re.compile(r"(?i)\b(authorization:\s*(?:bearer|token|basic)\s+|bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1" + MARK),
    # Flags that carry a secret: --password=x, --token x, -p'x' is too ambiguous and left alone.
    (re.compile(r"(?i)(--(?:password|passwd|token|secret|api-key|apikey|access-key|auth-token|client-secret)(?:=|\s+))"
                r"(\"[^\"]*\"|'[^']*'|\S+)"), r"\1" + MARK),
    # NAME_TOKEN=value, API_KEY=value, export SECRET=value, and the quoted-key forms of JSON / YAML output.
    (re.compile(r"(?i)\b([A-Z0-9_]*(?:API_KEY|APIKEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|AUTH_KEY|PRIVATE_KEY)"
                r"[A-Z0-9_]*[\"']?\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s\"']+)"), r"\1" + MARK),
    # URLs with credentials: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@"), r"\1" + MARK + "@"),
    # Provider token shapes.
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b"), MARK),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"), MARK),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}\b"), MARK),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), MARK),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MARK),
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}\b"), MARK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}\b"), MARK),
    (re.compile(r"\bnpm_[A-Za-z0-9]{30,}\b"), MARK),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"), MARK),
    # An output tail that starts inside a key (its BEGIN line cut off): everything up to the orphaned END.
    (re.compile(r"\A[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"), MARK),
)


def redact(text: str) -> str:
    """Replace every recognised secret in `text` with `[REDACTED]`."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
