"""What may be stored: secrets redacted, terminal control and Unicode format characters removed.

`clean_text` is the one rule. It is applied at one choke point, the store's connection (`store.connect`
installs `CleanConnection`), to every string parameter of every statement, so no capture path, note path or
summary writer can store a secret or a raw escape by forgetting to call it. JSON documents passed as
parameters are cleaned value by value, so they stay valid JSON.

The secret shapes live in two tables below: `CONTEXT_RULES` (a secret recognised by what surrounds it: a
header, a flag, an assignment, a URL) and `PROVIDER_TOKENS` (a secret recognised by its own well-known
prefix). Both err toward redacting: a false positive costs a word of memory, a false negative leaks a key.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from cortex_engine.store.password_options import ATTACHED, EITHER, PASSWORD_OPTIONS, SEPARATE

MARK = "[REDACTED]"

# C0 and C1 controls except tab and newline (ESC, BEL, CR, backspace, DEL, CSI …).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Whole terminal escape sequences, removed before the controls so their parameters (`[31m`, `]8;;url`) do not stay
# behind as text: CSI (ESC [ or 0x9B, parameters, intermediates, a final byte), OSC / DCS / SOS / PM / APC strings
# up to their terminator (BEL, ESC \ or 0x9C; a string left open ends at the line), and two-byte ESC sequences.
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)
# Unicode general category Cf (format characters: zero-width space/joiners, bidi controls, BOM, soft hyphen,
# invisible operators, tag characters …): they render as nothing, so text holding them can look like a label
# or a command it is not. Kept in sync with `unicodedata` by tests/security/test_secrets.py.
_FORMAT = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)

# Lone surrogates (category Cs): what Python makes of bytes that are not UTF-8 (a branch or file name git reports
# as raw bytes, decoded with `surrogateescape`). No UTF-8 text can hold one, so SQLite cannot store it: each is
# shown as U+FFFD, the replacement character, rather than refused or silently dropped.
_SURROGATE = re.compile("[\ud800-\udfff]")

# A secret value after a name or flag: quoted, or a run up to whitespace / a quote / a separator.
_VALUE = r"(?!\[REDACTED\])(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\&;,<>]+)"
# A header value: the rest of the line (or of the quoted string it sits in).
_HEADER_VALUE = r"(?!\[REDACTED\])([^\s\"'\\][^\n\"'\\]*)"


def _keep_quotes(match: re.Match[str]) -> str:
    """Replacement for (prefix)(value): the prefix kept, the value replaced, its quotes kept (JSON stays valid)."""
    value = match.group(match.lastindex or 1)
    prefix = match.group(1) if (match.lastindex or 0) > 1 else ""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return f"{prefix}{value[0]}{MARK}{value[0]}"
    return prefix + MARK


def _url_userinfo(match: re.Match[str]) -> str:
    """`scheme://user:pass@` → `scheme://user:[REDACTED]@`; a bare user name that could be a token → redacted."""
    scheme, user, password = match.group(1), match.group(2), match.group(3)
    if password is not None:
        return f"{scheme}{user}:{MARK}@"
    if re.fullmatch(r"[A-Za-z][A-Za-z._-]{0,31}", user):
        return match.group(0)  # git@, deploy@, admin@: a plain name, not a credential
    return f"{scheme}{MARK}@"


class Rule:
    """One secret shape: a name for people, the lowercase words one of which any match must contain (a cheap
    pre-check, so text without them never pays for the regex), the pattern and what replaces a match.

    The pattern is compiled the first time text holding one of the hints reaches it: a process that stores
    nothing secret-shaped (most one-shot commands) never compiles the ~80 patterns.
    """

    __slots__ = ("name", "hints", "source", "flags", "replace", "gate", "_pattern")

    def __init__(
        self,
        name: str,
        hints: tuple[str, ...],
        source: str,
        flags: int,
        replace: str | Callable[[re.Match[str]], str],
        gate: re.Pattern[str] | None = None,
    ) -> None:
        self.name, self.hints, self.source, self.flags, self.replace = name, hints, source, flags, replace
        self.gate = gate
        """A cheaper pattern any match must hold, for a rule whose hints are common (`:`)."""
        self._pattern: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once, on first use)."""
        if self._pattern is None:
            self._pattern = re.compile(self.source, self.flags)
        return self._pattern

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"


def _rule(
    name: str,
    hints: tuple[str, ...],
    pattern: str,
    replace: str | Callable[[re.Match[str]], str] = _keep_quotes,
    flags: int = 0,
    gate: str | None = None,
) -> Rule:
    return Rule(name, hints, pattern, flags, replace, re.compile(gate) if gate else None)


_I = re.IGNORECASE

# A password option's value, after the option: quoted (not empty), or a word (not another option, not already
# redacted); the separator is part of the kept prefix.
_OPTION_VALUE = {
    ATTACHED: r")(?!\[REDACTED\])(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'|;&<>]+)",
    EITHER: r"(?:\s*=\s*|\s+)?)(?![-=]|\[REDACTED\])(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'\\&;<>|]+)",
    SEPARATE: r"\s+)(?!-|\[REDACTED\])(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'\\&;<>|]+)",
}


def _command_rule(name: str, programs: tuple[str, ...], option: str, hints: tuple[str, ...] | None = None) -> Rule:
    """A secret given to a program on its command line: a program (`docker login`: the program, then its
    subcommand later in the same command) starts a command, and every match of `option` ((kept prefix)(value))
    in that command, up to a newline, `|`, `;` or `&`, has its value replaced. Each command is read once, so the
    cost is linear in the text however often a program's name recurs."""
    names = "|".join(r"\b[^\n|;&]*?\b".join(re.escape(word) for word in program.split()) for program in programs)
    inner = re.compile(option)

    def replace(command: re.Match[str]) -> str:
        return inner.sub(_keep_quotes, command.group(0))

    if hints is None:  # `login` is rarer than `oc`; a name's own words otherwise
        hints = tuple(sorted({program.split()[-1].lower() for program in programs}))
    return _rule(name, hints, rf"(?<![\w.-])(?:{names})(?![\w.-])[^\n|;&]*", replace)


def _option_rule(programs: tuple[str, ...], options: tuple[str, ...], form: str) -> Rule:
    """The rule for one row of `PASSWORD_OPTIONS` (`_command_rule`); a quote may open before the option
    (`'-pSECRET'`)."""
    flags = "|".join(re.escape(option) for option in sorted(options, key=len, reverse=True))
    prefix = common_prefix(programs)
    return _command_rule(
        f"{programs[0]} {'/'.join(options)}",
        programs,
        rf"(\s[\"']?(?:{flags})" + _OPTION_VALUE[form],
        (prefix,) if len(prefix) >= 4 else None,
    )


def common_prefix(names: tuple[str, ...]) -> str:
    """The longest start every one of `names` shares (`ldap` of ldapsearch, ldapmodify …)."""
    return os.path.commonprefix([name.lower() for name in names])


_AWS_SECRET = re.compile(
    r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])"
    r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
)
"""An AWS secret access key's shape: 40 characters of base64 holding an upper-case letter, a lower-case one and a
digit (a git SHA or another hex digest has no upper case)."""
_AWS_SECRET_WORDS = r"(?i:\b(?:aws|amazon)[\s_.-]*secret|secret[\s_-]*access[\s_-]*key)"

# Secrets recognised by their surroundings. Order matters: whole blocks first, then headers, then flags and
# assignments, so a later rule never sees half of what an earlier one replaced.
CONTEXT_RULES: tuple[Rule, ...] = (
    # PEM / OpenSSH / PGP private key blocks, whole (to the END line, or to the end of the text when cut).
    _rule(
        "private key block",
        ("private key",),
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----[\s\S]*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z)",
        MARK,
    ),
    # An output tail that starts inside a key (its BEGIN line cut off): everything up to the orphaned END.
    _rule("private key tail", ("private key",), r"\A[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----", MARK),
    # PuTTY private key files.
    _rule("putty private key", ("private-lines",), r"Private-Lines:\s*\d+[\s\S]*?(?:Private-MAC:\s*\S+|\Z)", MARK, _I),
    # Authorization / Proxy-Authorization headers, any scheme: the whole value.
    _rule(
        "authorization header", ("authorization",), r"\b((?:proxy-)?authorization\s*[:=]\s*)" + _HEADER_VALUE, flags=_I
    ),
    # Cookie / Set-Cookie headers carry session tokens.
    _rule("cookie header", ("cookie",), r"\b((?:set-)?cookie\s*:\s*)" + _HEADER_VALUE, flags=_I),
    # API-key style headers: X-API-Key, api-key, X-Auth-Token, Private-Token (GitLab), X-Amz-Security-Token …
    _rule(
        "api key header",
        ("key", "token"),
        r"(?<![\w/-])((?:[a-z0-9]+-)*?(?:api-?key|app(?:lication)?-key|auth-token|access-token|private-token|"
        r"amz-security-token|"
        r"goog-api-key|functions-key|subscription-key|apim-subscription-key|vault-token|csrf-token)\s*:\s*)"
        + _HEADER_VALUE,
        flags=_I,
    ),
    # A bearer token outside a header line.
    _rule("bearer token", ("bearer",), r"\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})", flags=_I),
    # Long flags that name a secret: --password=x, --token x, --jwt x, --client-secret x, --api-key x …
    _rule(
        "secret flag",
        ("pass", "pwd", "token", "secret", "key", "auth", "jwt", "cred", "sig"),
        r"(?<![\w-])(--?[a-z0-9-]*(?:password|passwd|passphrase|pass|pwd|token|secret|api-?key|"
        r"access-key|private-key|auth|jwt|credentials?|creds|sig|signature)(?:=|\s+))(?!-)" + _VALUE,
        flags=_I,
    ),
    # openssl -passin pass:SECRET / -passout / -pass / -k.
    _rule(
        "openssl pass:",
        ("-pass",),
        r"((?:^|\s)-pass(?:in|out|word)?\s+(?:(?:pass|env|file|fd):)?)(?!(?:pass|env|file|fd):)" + _VALUE,
        flags=_I,
    ),
    # Programs that take a password as a short option: the table `PASSWORD_OPTIONS` above, one rule per row. Rows
    # with longer options go first, and so does every named flag above: once lines are joined (a captured command's
    # summary is one line) a `-p` row's command can run on into `-passin pass:X` or `-pw X`, and `-p` + `assin`
    # must never be what stands for that option's value.
    *(_option_rule(*row) for row in sorted(PASSWORD_OPTIONS, key=lambda row: -max(map(len, row[1])))),
    # Password options whose value is not just the password: user%pass (Samba), user,pass (lftp), /p:pass (FreeRDP),
    # user/pass@db (Oracle tools), and passwords given as a positional argument (htpasswd -b, wpa_passphrase).
    _command_rule(
        "smb -U user%pass",
        (
            "smbclient",
            "rpcclient",
            "smbget",
            "smbcacls",
            "smbtree",
            "smbcquotas",
            "smbmap",
            "net",
            "winexe",
            "mount.cifs",
        ),
        r"(\s(?:-U|--user(?:name)?)(?:\s+|=)?[\"']?[^\s%\"']*%)(?!\[REDACTED\])([^\s\"']+)",
        ("%",),
    ),
    _command_rule(
        "lftp -u user,pass", ("lftp",), r"(\s(?:-u|--user)(?:\s+|=)[\"']?[^\s,\"']*,)(?!\[REDACTED\])([^\s\"']+)"
    ),
    _command_rule(
        "freerdp /p:",
        ("xfreerdp", "wlfreerdp", "sdl-freerdp", "freerdp"),
        r"(\s/(?:p|password):)" + _VALUE,
        ("freerdp",),
    ),
    _rule(
        "oracle user/pass@",
        ("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl"),
        r"(\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\b(?:\s+-\S+)*\s+[\"']?[A-Za-z][\w$#.]*/)"
        r"(?!\[REDACTED\])([^\s@\"'/]+)",
    ),
    _rule("wpa_passphrase", ("wpa_passphrase",), r"(\bwpa_passphrase\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\S+)\s+)" + _VALUE),
    _command_rule(
        "htpasswd -b",
        ("htpasswd",),
        r"(\s-\w*b\w*\s+(?:\S+\s+)?\S+\s+)" + _VALUE + r"(?![^\s\"'\\&;,<>]|\s+\[REDACTED\])",
    ),
    # `aws configure set aws_secret_access_key X`, `npm config set //r/:_authToken X`, `git config user.signingkey X`.
    _rule(
        "config set",
        ("config",),
        r"(\bconfig(?:ure)?\s+(?:set\s+)?(?:--\S+\s+)*[\w.:/@-]*(?:secret|password|passwd|token|key|"
        r"auth|credential)[\w.:/@-]*\s+)(?![=-])" + _VALUE,
        flags=_I,
    ),
    # A bare AWS secret access key (40 characters of base64, mixed case with a digit: not a hex digest) within a
    # line's reach of the words that name it: after them (`our aws secret is …`, `Secret access key: …`) or before.
    _rule(
        "AWS secret access key after its name",
        ("secret",),
        rf"{_AWS_SECRET_WORDS}(?:[^\n]{{0,100}}?{_AWS_SECRET_WORDS})*[^\n]{{0,100}}",  # a run of mentions, whole
        lambda span: _AWS_SECRET.sub(MARK, span.group(0)),
    ),
    _rule(
        "AWS secret access key before its name",
        ("secret",),
        rf"{_AWS_SECRET.pattern}(?=[^\n]{{0,60}}?{_AWS_SECRET_WORDS})",
        MARK,
    ),
    # Azure storage / service bus connection strings and SAS URLs; ODBC passwords.
    _rule(
        "azure key",
        ("key", "sharedaccess", "sig", "pwd", "password"),
        r"\b((?:AccountKey|SharedAccessKey|SharedAccessSignature|sig|Pwd|Password)\s*=\s*)([^;\s\"'\\&]+)",
        flags=_I,
    ),
    # URLs with credentials: scheme://user:password@host, and a token used as the user name.
    _rule(
        "url credentials",
        ("://",),
        r"\b([a-z][a-z0-9+.-]*://)([^/\s:@\"'<>]*)(?::([^/\s@\"'<>]*))?@",
        _url_userinfo,
        _I,
    ),
    # Signed-URL query parameters.
    _rule(
        "signed url",
        ("sig", "token", "code", "key", "secret", "password", "auth", "credential"),
        r"([?&](?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|X-Goog-Signature|X-Goog-Credential|"
        r"signature|token|access_token|refresh_token|id_token|code|key|api_key|apikey|app_key|application_key|secret|"
        r"client_secret|"
        r"password|auth)=)([^&\s\"'\\#]+)",
        flags=_I,
    ),
    # UPPER_CASE assignments whose name has a secret segment: DB_PASS=, MYSQL_PWD=, *_PASSPHRASE=, ENCRYPTION_KEY=,
    # GITHUB_TOKEN=, export API_SECRET=, and the quoted-key JSON / YAML forms.
    _rule(
        "secret assignment",
        ("pass", "pwd", "secret", "token", "key", "auth", "sig", "cred", "salt", "dsn", "private"),
        r"\b((?:[A-Z0-9]+_)*(?:[A-Z0-9]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|APIKEY|"
        r"CREDENTIALS?)|PASS|PWD|KEY|AUTH|SIG|CREDS|SALT|DSN|PRIVATE)(?:_[A-Z0-9]+)*[\"']?\s*[=:]\s*)" + _VALUE,
    ),
    # lower / mixed case names with an unmistakable word: password: x, api_key = x, "client_secret": "x".
    _rule(
        "secret key-value",
        ("pass", "secret", "token", "key", "credential"),
        r"(?<![\w-])([\w.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|"
        r"private[_-]?key|auth[_-]?key|app(?:lication)?[_-]?key|master[_-]?key|signing[_-]?key|encryption[_-]?key|"
        r"client[_-]?key|credentials?)[\w-]*[\"']?\s*[=:]\s*)(?![=:/])" + _VALUE,
        flags=_I,
    ),
    # JSON / YAML / TOML keys that are a secret only when quoted or in a config file's shape: "pass": "x",
    # Docker's config.json `"auth": "<base64 user:pass>"` and `"identitytoken"`.
    _rule(
        "quoted pass key", ("pass", "pwd"), r"([\"'](?:pass|pwd|pw|passwd|passcode)[\"']\s*[=:]\s*)" + _VALUE, flags=_I
    ),
    _rule(
        "docker config auth",
        ("auth", "token"),
        r"(\"(?:auth|identitytoken|registrytoken)\"\s*:\s*)(?!\"\[REDACTED\])"
        r"(\"[A-Za-z0-9+/=._-]{8,}\")",
        flags=_I,
    ),
    # .netrc: `machine h login u password p`, on one line or several (`default` instead of `machine h`).
    _rule(
        ".netrc password",
        ("password",),
        r"(\b(?:(?:machine|login|account|port|protocol)\s+\S+|default)\s+"
        r"password\s+)" + _VALUE,
    ),
    # .pgpass: `host:port:database:user:password` (a `*` for any field but the password).
    _rule(
        ".pgpass line",
        (":",),
        r"(?<![\w:./@-])((?:[A-Za-z0-9-]*[A-Za-z.][A-Za-z0-9.-]*|\*):(?:\d{1,5}|\*):[^:\s\"']+:[^:\s\"']+:)"
        r"(?!\[REDACTED\])([^\s\"']+)",
        gate=r":(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:",
    ),
)

# Secrets recognised by their own shape: one row per provider, newest shapes included. Add rows here.
PROVIDER_TOKENS: tuple[Rule, ...] = (
    _rule(
        "AWS access key id",
        ("akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "abia", "acca"),
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b",
        MARK,
    ),
    _rule(
        "GitHub token (ghp_/gho_/ghu_/ghs_/ghr_)",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"\bgh[pousr]_[A-Za-z0-9]{20,}",
        MARK,
    ),
    _rule("GitHub fine-grained PAT", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{20,}", MARK),
    _rule(
        "GitLab tokens (glpat-, gldt-, glrt- …)",
        ("gl",),
        r"\bgl(?:pat|dt|ptt|rt|cbt|soat|oas|ft|imt|agent|wt)-[A-Za-z0-9_-]{16,}",
        MARK,
    ),
    _rule("GitLab runner registration token", ("gr1348941",), r"\bGR1348941[A-Za-z0-9_-]{20,}", MARK),
    _rule("Slack tokens (xoxb-, xoxp-, xoxa-, xoxe- …)", ("xox",), r"\bxox[a-z]-[A-Za-z0-9-]{10,}", MARK),
    _rule("Slack app-level token", ("xapp-",), r"\bxapp-\d-[A-Za-z0-9-]{10,}", MARK),
    _rule(
        "Slack webhook URL",
        ("hooks.slack.com",),
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
        MARK,
    ),
    _rule(
        "Microsoft Teams / Office 365 webhook URL",
        ("webhook.office", "outlook.office"),
        r"https?://[\w.-]*(?:webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/[A-Za-z0-9@/_.%-]+",
        MARK,
    ),
    _rule(
        "Discord webhook URL",
        ("/api/webhooks/",),
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
        MARK,
    ),
    _rule(
        "Stripe keys (sk_/rk_/pk_ live and test)",
        ("_live_", "_test_"),
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}",
        MARK,
    ),
    _rule("Stripe webhook secret", ("whsec_",), r"\bwhsec_[A-Za-z0-9]{10,}", MARK),
    _rule("OpenAI / Anthropic keys (sk-, sk-proj-, sk-ant-)", ("sk-",), r"\bsk-[A-Za-z0-9_-]{16,}", MARK),
    _rule("Google API key", ("aiza",), r"\bAIza[0-9A-Za-z_-]{30,}", MARK),
    _rule("Google OAuth access token", ("ya29.",), r"\bya29\.[0-9A-Za-z_-]{20,}", MARK),
    _rule("Google OAuth client secret", ("gocspx-",), r"\bGOCSPX-[A-Za-z0-9_-]{20,}", MARK),
    _rule("Google OAuth refresh token", ("1//0",), r"(?<![\w/])1//0[A-Za-z0-9_-]{30,}", MARK),
    _rule("SendGrid API key", ("sg.",), r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", MARK),
    _rule("DigitalOcean tokens (dop_v1_, doo_v1_, dor_v1_)", ("_v1_",), r"\bdo[opr]_v1_[A-Za-z0-9]{32,}", MARK),
    _rule("Shopify tokens (shpat_, shpca_, shppa_, shpss_)", ("shp",), r"\bshp(?:at|ca|pa|ss)_[A-Za-z0-9]{20,}", MARK),
    _rule("PyPI upload token", ("pypi-",), r"\bpypi-[A-Za-z0-9_-]{32,}", MARK),
    _rule("npm access token", ("npm_",), r"\bnpm_[A-Za-z0-9]{30,}", MARK),
    _rule("Hugging Face token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}", MARK),
    _rule("JSON Web Token", ("eyj",), r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.?[A-Za-z0-9_-]*", MARK),
    _rule("Mapbox secret token", ("k.eyj",), r"\b[sp]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}", MARK),
    _rule("Twilio API key and account SID (SK…, AC…)", ("sk", "ac"), r"\b(?:SK|AC)[0-9a-fA-F]{32}\b", MARK),
    _rule("Mailgun API key", ("key-",), r"\bkey-[0-9a-zA-Z]{32}\b", MARK),
    _rule("Mailchimp API key", ("-us",), r"\b[0-9a-f]{32}-us\d{1,2}\b", MARK),
    _rule("Atlassian API token", ("atatt3",), r"\bATATT3[A-Za-z0-9_=-]{20,}", MARK),
    _rule("Linear API key", ("lin_",), r"\blin_(?:api|oauth)_[A-Za-z0-9]{30,}", MARK),
    _rule("Notion integration token", ("secret_", "ntn_"), r"\b(?:secret_[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{30,})", MARK),
    # Personal, CLI, service-account, SCIM and audit tokens, and service tokens, which name their environment
    # (`dp.st.<env>.<secret>`).
    _rule(
        "Doppler tokens (dp.pt., dp.st.<env>., dp.ct., dp.sa., dp.scim., dp.audit.)",
        ("dp.",),
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[A-Za-z0-9_-]{1,64}\.)?[A-Za-z0-9]{20,}",
        MARK,
    ),
    _rule("HashiCorp Vault token", ("hvs.", "hvb.", "hvr."), r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}", MARK),
    _rule("Terraform Cloud token", (".atlasv1.",), r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{40,}", MARK),
    _rule("Heroku API key", ("hrku-",), r"\bHRKU-[A-Za-z0-9_-]{20,}", MARK),
    _rule("Databricks token", ("dapi",), r"\bdapi[a-f0-9]{32}(?:-\d+)?\b", MARK),
    # A bot's numeric id in base64 (each three digits encode as [MNO][DTjz][AEIMQUYcgk][w-z0-5]), a timestamp,
    # an HMAC. Its only fixed character is a dot: the gate (a dot, six characters, a dot) keeps the rule off
    # ordinary dotted text.
    _rule(
        "Discord bot token",
        (".",),
        r"(?<![A-Za-z0-9_-])(?:[MNO][DTjz][AEIMQUYcgk][w-z0-5]){5,6}[A-Za-z0-9_-]{0,3}"
        r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])",
        MARK,
        gate=r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}",
    ),
    _rule("Grafana tokens (glsa_, glc_)", ("glsa_", "glc_"), r"\bgl(?:sa|c)_[A-Za-z0-9_=+/-]{30,}", MARK),
    _rule("New Relic key", ("nrak-", "nraa-", "nrii-", "nrjs-"), r"\bNR(?:AK|AA|II|JS)-[A-Za-z0-9]{20,}", MARK),
    _rule("Sentry tokens", ("sntr",), r"\bsntr[ysu]_[A-Za-z0-9_=+/-]{30,}", MARK),
    _rule("Postman API key", ("pmak-",), r"\bPMAK-[A-Za-z0-9-]{30,}", MARK),
    _rule("Square tokens", ("sq0", "eaaa"), r"\b(?:sq0atp|sq0csp|EAAA)[A-Za-z0-9_-]{20,}", MARK),
    _rule("Telegram bot token", (":aa",), r"\b\d{8,10}:AA[A-Za-z0-9_-]{30,}", MARK),
    _rule("Supabase token", ("sbp_",), r"\bsbp_[a-f0-9]{40}\b", MARK),
    _rule("Docker Hub PAT", ("dckr_pat_",), r"\bdckr_pat_[A-Za-z0-9_-]{20,}", MARK),
    _rule("Figma PAT", ("figd_",), r"\bfigd_[A-Za-z0-9_-]{30,}", MARK),
    _rule(
        "Groq / Replicate / Perplexity / xAI keys",
        ("gsk_", "r8_", "pplx-", "xai-"),
        r"\b(?:gsk_|r8_|pplx-|xai-)[A-Za-z0-9]{30,}",
        MARK,
    ),
    _rule("Age secret key", ("age-secret-key-1",), r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}", MARK),
    _rule("Alibaba Cloud access key id", ("ltai",), r"\bLTAI[A-Za-z0-9]{12,20}\b", MARK),
    _rule("Azure AD client secret", ("q~",), r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", MARK),
    _rule(
        "Buildkite / CircleCI / Netlify / Prefect tokens",
        ("bkua_", "ccipat_", "nfp_", "pnu_"),
        r"\b(?:bkua_|CCIPAT_|nfp_|pnu_)[A-Za-z0-9_]{30,}",
        MARK,
    ),
    _rule("Pulumi / RubyGems tokens", ("pul-", "rubygems_"), r"\b(?:pul-[a-f0-9]{40}|rubygems_[a-f0-9]{48})\b", MARK),
    _rule("NuGet API key", ("oy2",), r"\boy2[a-z0-9]{43}\b", MARK),
    _rule("Sendinblue / Brevo key", ("xkeysib-",), r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", MARK),
)

RULES: tuple[Rule, ...] = CONTEXT_RULES + PROVIDER_TOKENS
_HINTS = frozenset(hint for rule in RULES for hint in rule.hints)
_MIN_SECRET = 6  # no rule matches anything shorter


def _hint_index() -> tuple[str, dict[str, tuple[str, ...]], dict[str, tuple[int, ...]]]:
    """How `redact` finds a text's hints: one pattern that finds every root (a hint holding no other hint) in one
    pass, each hint's children, and the rules each hint lets run (indexes into RULES: rules run in table order).

    The roots are built into a trie-shaped pattern (`sk|sq0|ssh…` as `s(?:k|q0|sh…)`), so each position of the
    text costs one step per character matched instead of one per hint, and since no root is the start of
    another, at most one root matches at a position: a lookahead at every position finds them all, overlapping
    or not. A hint holding others (`sk-` holds `sk`) is looked for only where the longest of them was found: a
    hint present implies every hint it holds present, so nothing is missed.
    """
    roots = sorted(h for h in _HINTS if not any(g != h and g in h for g in _HINTS))
    children: dict[str, list[str]] = {}
    for hint in _HINTS.difference(roots):
        parent = max((g for g in _HINTS if g != hint and g in hint), key=lambda g: (len(g), g))
        children.setdefault(parent, []).append(hint)
    rules_of: dict[str, list[int]] = {}
    for index, rule in enumerate(RULES):
        for hint in rule.hints:
            rules_of.setdefault(hint, []).append(index)
    return (
        f"(?=({_trie(roots)}))",
        {h: tuple(sorted(c)) for h, c in children.items()},
        {h: tuple(i) for h, i in rules_of.items()},
    )


_Trie = dict[str, "_Trie"]
"""A trie node: each next character's node."""


def _trie(words: list[str]) -> str:
    """A pattern matching any of `words` (none the start of another), shaped as their trie."""
    root: _Trie = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})

    def emit(node: _Trie) -> str:
        parts = [re.escape(char) + emit(child) for char, child in sorted(node.items())]
        return parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})" if parts else ""

    return emit(root)


_ROOTS_SOURCE, _CHILDREN, _RULES_OF = _hint_index()
_roots: list[re.Pattern[str]] = []  # compiled on first use
STATS = {"redact_calls": 0, "scanned": 0, "rules_run": 0}
"""What redaction did in this process (read by bench/flush_redact.py)."""


def _present_hints(lowered: str) -> list[str]:
    """Every hint `lowered` holds: its roots in one pass, then the longer hints under the roots found."""
    if not _roots:
        _roots.append(re.compile(_ROOTS_SOURCE))
    found = list(set(_roots[0].findall(lowered)))
    at = 0
    while at < len(found):
        found += [child for child in _CHILDREN.get(found[at], ()) if child in lowered]
        at += 1
    return found


def redact(text: str) -> str:
    """Replace every recognised secret in `text` with `[REDACTED]` (idempotent).

    The text is lowercased once and its hints found (`_present_hints`); only the rules those hints name run, in
    table order. Every rule reads a text once (see `_command_rule`), so the cost is linear in the text. A text up to
    `_CACHED_CHARS` seen before costs one lookup: a flush redacts a command, then the summary made of it, and the
    same commands and outputs recur (8,885 of the 29,725 texts a 10k-line flush redacted were repeats).
    """
    STATS["redact_calls"] += 1
    if len(text) <= _CACHED_CHARS:
        return _redact_short(text)
    return _redact(text)


def _redact(text: str) -> str:
    if len(text) < _MIN_SECRET:
        return text
    STATS["scanned"] += 1
    present = _present_hints(text.lower())
    if not present:
        return text
    for index in sorted({index for hint in present for index in _RULES_OF.get(hint, ())}):
        rule = RULES[index]
        if rule.gate is None or rule.gate.search(text):
            STATS["rules_run"] += 1
            text = rule.pattern.sub(rule.replace, text)
    return text


def strip_invisible(text: str) -> str:
    """Remove terminal escape sequences whole, the other control characters (C0/C1 except tab and newline) and
    Unicode format characters (Cf); show a lone surrogate (bytes that were not UTF-8) as U+FFFD."""
    if text.isascii() and text.isprintable():  # the common case, decided in C: nothing to remove
        return text
    return _SURROGATE.sub("\ufffd", _FORMAT.sub("", _CONTROL.sub("", _ESCAPE.sub("", text))))


# What holds nothing to strip or redact, decided by one match: a hex run (ids, digests), a timestamp, a short run
# of lowercase words and colons (kinds, channels), and an id this store makes: a UUID (`base.ids.new_id`) under
# the table and episode-kind names that prefix item and episode ids. Only those names: a UUID under an author's
# word is redacted when the word names a secret (`token:<uuid>`).
_OWN_ID = (
    r"(?:(?:command_runs|episodes|notes):)?(?:(?:command_failure|test_cycle|session_summary|"
    r"subagent_conclusion):)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
_PLAIN = re.compile(rf"[0-9a-f-]*|\d{{4}}-\d\d-\d\dT[0-9:.+Z-]*|[a-z_:]{{0,24}}|{_OWN_ID}")


def clean_text(text: str) -> str:
    """A string as it may be stored: invisible characters removed, then secrets redacted.

    A string up to `_CACHED_CHARS` is looked up first among those already cleaned (scope keys, paths, kinds and
    subjects recur in every statement of a flush), so a string seen before costs one dictionary lookup.
    """
    if len(text) <= _CACHED_CHARS:
        return _clean_short(text)
    return redact(strip_invisible(text))


_CACHED_CHARS = 1024
_redact_short = functools.lru_cache(maxsize=8192)(_redact)


@functools.lru_cache(maxsize=32768)
def _clean_short(text: str) -> str:
    if _PLAIN.fullmatch(text):  # ids, digests, timestamps, kinds: nothing to strip or redact
        return text
    return redact(strip_invisible(text))


def _clean_strings(values: list[str]) -> list[str]:
    """`clean_text` over many strings (a file inventory): the hint words are looked for once in all of them,
    so a value holding none of those present, and nothing invisible, is kept without a per-value scan."""
    joined = "\n".join(values).lower()
    present = _present_hints(joined)
    out = []
    for value in values:
        if value.isascii() and value.isprintable():
            lowered = value.lower()
            if not any(hint in lowered for hint in present):
                out.append(value)
                continue
        out.append(clean_text(value))
    return out


def _clean_json_value(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        if len(value) > 64 and all(isinstance(v, str) for v in value):
            return _clean_strings(value)
        return [_clean_json_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: _clean_member(k, v) for k, v in value.items()}
    return value


def _clean_member(key: object, value: Any) -> Any:
    """A JSON object's member value, cleaned; a string under a key that names a secret (`"auth"`, `"pass"`,
    `"client_secret"`) is also judged with its key, as the text `{"key": "value"}` would be."""
    cleaned = _clean_json_value(value)
    if not isinstance(cleaned, str) or not isinstance(key, str) or not _names_a_secret(key):
        return cleaned
    pair = json.dumps({key: cleaned})
    judged = redact(pair)
    if judged == pair:
        return cleaned
    try:
        return next(iter(json.loads(judged).values()))
    except (ValueError, StopIteration):
        return MARK


_KEY_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "sig", "private", "salt", "dsn")


@functools.lru_cache(maxsize=1024)
def _names_a_secret(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in _KEY_WORDS)


def clean_param(value: object) -> object:
    """A statement parameter as it may reach SQLite: strings cleaned, JSON documents cleaned value by value."""
    if not isinstance(value, str):
        return value
    if len(value) <= _CACHED_CHARS:
        return _clean_short_param(value)
    return _clean_string_param(value)


def _clean_string_param(value: str) -> str:
    if value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
        try:
            document = json.loads(value)
        except ValueError:
            return clean_text(value)
        cleaned = _clean_json_value(document)
        return value if cleaned == document else json.dumps(cleaned)
    return clean_text(value)


# A short parameter seen before (a scope key, a session id, a kind, a path: most of a flush's parameters) costs
# one lookup, JSON documents included.
_clean_short_param = functools.lru_cache(maxsize=32768)(_clean_string_param)


class _Cleaned(dict[object, object]):
    """Statement parameters as they may reach SQLite, by parameter: a hit is one lookup made in C, for the whole
    row at once (`_clean_params`); a miss is cleaned by `clean_param` and, when a string up to `_CACHED_CHARS`,
    kept. A 10k-line flush binds about 240,000 parameters, 82 % of them strings seen before.

    Only strings and None are ever keys: a number is never kept (1, 1.0 and True are equal keys, and SQLite must
    see each as it was given).
    """

    def __missing__(self, value: object) -> object:
        if type(value) is not str:
            return clean_param(value)
        # A plain string (a new id, a timestamp: most misses) is its own cleaning, decided by the one match
        # `_clean_short` would make after three calls; the rest take the whole path, whose caches may hold them.
        cleaned = value if _PLAIN.fullmatch(value) else _clean_string_param(value)
        if len(value) <= _CACHED_CHARS:
            if len(self) >= _KEPT_PARAMETERS:
                self.clear()
                self[None] = None
            self[value] = cleaned
        return cleaned


_KEPT_PARAMETERS = 32768
_CLEANED = _Cleaned({None: None})
_cleaned = _CLEANED.__getitem__


def as_stored(value: object) -> object:
    """A statement parameter as the choke point binds it: what a row just written holds, without reading it back
    (a string it has just cleaned is a lookup)."""
    return _cleaned(value)


def _clean_params(parameters: Any) -> Any:
    if isinstance(parameters, (list, tuple)):
        try:
            return list(map(_cleaned, parameters))
        except TypeError:  # an unhashable value: passed on for SQLite to refuse as it would have
            return [clean_param(v) for v in parameters]
    if isinstance(parameters, dict):
        return {k: clean_param(v) for k, v in parameters.items()}
    return parameters


def forget() -> None:
    """Drop every string this process has cleaned and remembered (a benchmark measures cleaning from cold)."""
    for cache in (_clean_short, _clean_short_param, _redact_short, _names_a_secret):
        cache.cache_clear()
    _CLEANED.clear()
    _CLEANED[None] = None


class CleanCursor(sqlite3.Cursor):
    """A cursor whose statements only ever see cleaned strings (see `clean_text`)."""

    def execute(self, sql: str, parameters: Any = (), /) -> CleanCursor:
        """Execute with every string parameter cleaned."""
        return super().execute(sql, _clean_params(parameters))

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> CleanCursor:
        """Execute for each row of parameters, each cleaned."""
        return super().executemany(sql, (_clean_params(p) for p in seq_of_parameters))


class CleanConnection(sqlite3.Connection):
    """The store's connection: the one choke point every stored string passes through.

    Every string parameter of every statement is cleaned, lookups included, so a key compared against stored
    text is cleaned the same way the stored text was. SQL text itself is never rewritten: author text is
    always passed as a parameter.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.known_scopes: dict[str, int] = {}  # committed scope key → id (`store.scope_id`)

    def cursor(self, factory: Any = None) -> CleanCursor:  # type: ignore[override]
        """A cleaning cursor."""
        return super().cursor(factory or CleanCursor)

    def execute(self, sql: str, parameters: Any = (), /) -> CleanCursor:
        """Execute with every string parameter cleaned."""
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> CleanCursor:
        """Execute for each row of parameters, each cleaned."""
        return self.cursor().executemany(sql, seq_of_parameters)
