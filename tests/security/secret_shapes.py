"""Realistic fake secrets, one per shape the redaction must catch: `(shape, text carrying it, the secret bytes)`.

Every body is generated from a seed, so no real credential is ever in the repository and every secret is
unique (a scan of the store for its bytes cannot be confused by another case). The texts are what an agent
would really type or read: a command line, a header, a config line, a log line.
"""

from __future__ import annotations

import base64
import random
import string

_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"
_B64URL = _ALNUM + "-_"


def _body(seed: int, length: int, alphabet: str = _ALNUM) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(length))


def _pem(label: str, seed: int) -> tuple[str, str]:
    lines = [_body(seed * 10 + i, 64, string.ascii_letters + string.digits + "+/") for i in range(4)]
    block = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return block, lines[1]


def shapes() -> list[tuple[str, str, str]]:
    """Every shape: (name, a realistic text carrying the secret, the secret's own bytes)."""
    b = _body
    cases: list[tuple[str, str, str]] = []

    def add(name: str, text: str, secret: str) -> None:
        assert secret in text, name
        cases.append((name, text, secret))

    s = "AKIA" + b(1, 16, _UPPER)
    add("AWS access key id", f"export AWS_ACCESS_KEY_ID={s}", s)
    s = "ASIA" + b(2, 16, _UPPER)
    add("AWS session key id (bare)", f"using credentials {s} from the profile", s)
    s = b(3, 40, _ALNUM + "/+")
    add("aws configure set secret", f"aws configure set aws_secret_access_key {s}", s)
    s = b(4, 40, _ALNUM + "/+")
    add("AWS_SECRET_ACCESS_KEY env", f"AWS_SECRET_ACCESS_KEY={s} aws s3 ls", s)
    s = "ghp_" + b(5, 36)
    add("GitHub ghp_", f"git clone https://github.com/acme/app && echo {s}", s)
    s = "gho_" + b(6, 36)
    add("GitHub gho_", f"gh auth status shows token {s}", s)
    s = "github_pat_" + b(7, 22) + "_" + b(8, 59)
    add("GitHub github_pat_", f"GH_PAT={s}", s)
    s = "ghs_" + b(9, 36)
    add("GitHub ghs_ in URL user", f"git push https://x-access-token:{s}@github.com/acme/app.git", s)
    s = "glpat-" + b(10, 20, _B64URL)
    add("GitLab glpat-", f"curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.com/api/v4/projects", s)
    s = "glpat-" + b(11, 20, _B64URL)
    add("GitLab glpat- bare", f"the token {s} expired", s)
    s = "xoxb-" + b(12, 12, string.digits) + "-" + b(13, 13, string.digits) + "-" + b(14, 24)
    add("Slack xoxb-", f"SLACK_BOT={s} node bot.js", s)
    s = "xoxp-" + b(15, 12, string.digits) + "-" + b(16, 12, string.digits) + "-" + b(17, 32, _HEX)
    add("Slack xoxp-", f"slack token {s}", s)
    s = "xapp-1-A" + b(18, 10, _UPPER) + "-" + b(19, 13, string.digits) + "-" + b(20, 64, _HEX)
    add("Slack xapp-", f"app token: {s}", s)
    s = "T" + b(21, 8, _UPPER) + "/B" + b(22, 8, _UPPER) + "/" + b(23, 24)
    add("Slack webhook URL", f"curl -X POST https://hooks.slack.com/services/{s} -d '{{}}'", s)
    s = b(24, 18, string.digits) + "/" + b(25, 68, _B64URL)
    add("Discord webhook URL", f"post to https://discord.com/api/webhooks/{s}", s)
    s = "sk_live_" + b(26, 24)
    add("Stripe sk_live_", f"Stripe.api_key = '{s}'", s)
    s = "sk_live_" + b(27, 24)
    add("Stripe sk_live_ bare", f"charging with {s} now", s)
    s = "rk_live_" + b(28, 24)
    add("Stripe rk_live_", f"restricted key {s}", s)
    s = "whsec_" + b(29, 32)
    add("Stripe whsec_", f"stripe listen printed {s}", s)
    s = "sk-" + b(30, 48)
    add("OpenAI sk-", f"OPENAI_API_KEY={s}", s)
    s = "sk-proj-" + b(31, 56, _B64URL)
    add("OpenAI sk-proj-", f'client = OpenAI(api_key="{s}")', s)
    s = "sk-ant-api03-" + b(32, 93, _B64URL) + "AA"
    add("Anthropic sk-ant-", f"x-api-key: {s}", s)
    s = "sk-ant-api03-" + b(33, 93, _B64URL) + "AA"
    add("Anthropic sk-ant- bare", f"use {s} for the eval", s)
    s = "AIza" + b(34, 35, _B64URL)
    add("Google AIza", f"https://maps.googleapis.com/maps/api/geocode/json?address=x&key={s}", s)
    s = "AIza" + b(35, 35, _B64URL)
    add("Google AIza bare", f"firebase apiKey {s}", s)
    s = "ya29." + b(36, 120, _B64URL)
    add("Google ya29.", f"gcloud auth print-access-token -> {s}", s)
    s = "SG." + b(37, 22, _B64URL) + "." + b(38, 43, _B64URL)
    add("SendGrid SG.", f"sendgrid key {s}", s)
    s = "dop_v1_" + b(39, 64, _HEX)
    add("DigitalOcean dop_v1_", f"doctl auth init -t {s}", s)
    s = "shpat_" + b(40, 32, _HEX)
    add("Shopify shpat_", f"shopify token {s}", s)
    s = "pypi-AgEIcHlwaS5vcmc" + b(41, 120, _B64URL)
    add("PyPI pypi-", f"twine upload -p {s} dist/*", s)
    s = "npm_" + b(42, 36)
    add("npm npm_", f"echo //registry.npmjs.org/:_authToken={s} > .npmrc", s)
    s = "hf_" + b(43, 34)
    add("Hugging Face hf_", f"huggingface-cli login --token {s}", s)
    s = "hf_" + b(44, 34)
    add("Hugging Face hf_ bare", f"loaded model with {s}", s)
    header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    s = header + ".eyJ" + b(45, 60, _B64URL) + "." + b(46, 43, _B64URL)
    add("JWT bare", f"token is {s}", s)
    s = header + ".eyJ" + b(47, 60, _B64URL) + "." + b(48, 43, _B64URL)
    add("JWT after --jwt", f"deploy --jwt {s}", s)
    s = header + ".eyJ" + b(49, 60, _B64URL) + "." + b(50, 43, _B64URL)
    add("JWT in Cookie header", f"curl -H 'Cookie: session={s}' https://app.local/", s)
    block, s = _pem("RSA PRIVATE KEY", 51)
    add("PEM RSA private key", block, s)
    block, s = _pem("OPENSSH PRIVATE KEY", 52)
    add("OpenSSH private key", f"cat ~/.ssh/id_ed25519\n{block}", s)
    block, s = _pem("PRIVATE KEY", 53)
    add("PKCS8 private key", block, s)
    block, s = _pem("ENCRYPTED PRIVATE KEY", 54)
    add("encrypted private key", block, s)
    block, s = _pem("PGP PRIVATE KEY BLOCK", 55)
    add("PGP private key block", block, s)
    s = b(56, 86, _ALNUM + "+/") + "=="
    add(
        "Azure AccountKey=",
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
        s,
    )
    s = b(57, 43, _ALNUM) + "%3D"
    add("Azure SAS sig=", f"https://acme.blob.core.windows.net/c/f?sv=2022-11-02&se=2026-01-01&sp=r&sig={s}", s)
    s = b(58, 16)
    add("URL user:pass@", f"psql postgres://admin:{s}@db.internal:5432/app", s)
    s = b(59, 40, _HEX)
    add("URL token@ as user", f"git clone https://{s}@github.com/acme/private.git", s)
    s = b(60, 14)
    add("redis URL :pass@", f"REDIS_URL=redis://:{s}@cache:6379/0", s)
    s = b(61, 14)
    add("mysql -pX", f"mysql -u root -p{s} app < dump.sql", s)
    s = b(62, 14)
    add("mysqldump -pX", f"mysqldump -h db -uroot -p{s} app > dump.sql", s)
    s = b(63, 14)
    add("sshpass -p", f"sshpass -p {s} ssh deploy@host", s)
    s = b(64, 14)
    add("redis-cli -a", f"redis-cli -h cache -a {s} ping", s)
    s = b(65, 14)
    add("curl -u user:pass", f"curl -u admin:{s} https://api.local/v1/items", s)
    s = b(66, 14)
    add("openssl -passin pass:", f"openssl rsa -in key.pem -passin pass:{s} -out plain.pem", s)
    s = b(67, 14)
    add("--password=", f"mongo --username admin --password={s} db", s)
    s = b(68, 14)
    add("--password value", f"docker login --username me --password {s} registry.local", s)
    s = b(69, 20)
    add("--token value", f"vault login --token {s}", s)
    s = b(70, 16)
    add("DB_PASSWORD=", f"DB_PASSWORD={s} ./manage.py migrate", s)
    s = b(71, 16)
    add("DB_PASS=", f"DB_PASS={s} npm start", s)
    s = b(72, 16)
    add("MYSQL_PWD=", f"MYSQL_PWD={s} mysql -u root", s)
    s = b(73, 16)
    add("*_PASSPHRASE=", f"export GPG_PASSPHRASE={s}", s)
    s = b(74, 32, _HEX)
    add("ENCRYPTION_KEY=", f"ENCRYPTION_KEY={s} python app.py", s)
    s = b(75, 24)
    add("*_SECRET=", f"export CLIENT_SECRET={s}", s)
    s = b(76, 24)
    add("*_TOKEN=", f'API_TOKEN="{s}" ./run.sh', s)
    s = b(77, 24)
    add("*_KEY=", f"STRIPE_SIGNING_KEY='{s}'", s)
    s = b(78, 16)
    add("yaml password:", f"database:\n  user: app\n  password: {s}\n", s)
    s = b(79, 24)
    add("json client_secret", f'{{"client_id": "abc", "client_secret": "{s}"}}', s)
    s = b(80, 32)
    add("Authorization: Bearer", f"curl -H 'Authorization: Bearer {s}' https://api.local/", s)
    s = b(81, 24, _ALNUM + "+/") + "=="
    add("Authorization: Basic", f"Authorization: Basic {s}", s)
    s = b(82, 32)
    add("X-API-Key header", f'curl -H "X-API-Key: {s}" https://api.local/', s)
    s = b(83, 32)
    add("api-key header", f"api-key: {s}", s)
    s = b(84, 32)
    add("Cookie header", f"Cookie: sessionid={s}; csrftoken=abc", s)
    s = "SK" + b(85, 32, _HEX)
    add("Twilio SK", f"twilio api key {s}", s)
    s = "hvs." + b(86, 90, _B64URL)
    add("Vault hvs.", f"VAULT_TOKEN is {s}", s)
    s = "dckr_pat_" + b(87, 27, _B64URL)
    add("Docker Hub dckr_pat_", f"docker login -u me -p {s}", s)
    s = "GOCSPX-" + b(88, 28, _B64URL)
    add("Google OAuth GOCSPX-", f"client secret {s}", s)
    s = "AGE-SECRET-KEY-1" + b(89, 58, _UPPER)
    add("age secret key", f"# created: 2026\n{s}", s)
    cases.extend(_config_and_topic_shapes())
    cases.extend(_family_shapes())
    return cases


def _config_and_topic_shapes() -> list[tuple[str, str, str]]:
    """Shapes the first redactor missed (config files, lower-case headers, webhooks) and a bracketed recall topic."""
    b = _body
    out: list[tuple[str, str, str]] = []

    def add(name: str, text: str, secret: str) -> None:
        assert secret in text, name
        out.append((name, text, secret))

    s = b(100, 18)
    add(".netrc one line", f"machine api.heroku.com login me@example.com password {s}", s)
    s = b(101, 18)
    add(".netrc multi-line", f"cat ~/.netrc\nmachine git.internal\n  login deploy\n  password {s}\n", s)
    s = b(102, 32, _HEX)
    add("dd-application-key header", f"curl -H 'dd-application-key: {s}' https://api.datadoghq.com/api/v1/monitor", s)
    s = b(103, 40, _HEX)
    add("Datadog app_key=", f"https://api.datadoghq.com/api/v1/query?api_key=abc&app_key={s}&query=avg", s)
    s = b(104, 24, _ALNUM + "+/") + "=="
    add("Docker config.json auth", f'{{"auths": {{"registry.acme.io": {{"auth": "{s}"}}}}}}', s)
    s = b(105, 16)
    add("JSON pass", f'{{"user": "svc", "pass": "{s}"}}', s)
    s = b(106, 16)
    add(".pgpass line", f"db.internal:5432:app:admin:{s}", s)
    s = b(107, 16)
    add("docker login -p", f"docker login -u me -p {s} registry.acme.io", s)
    s = b(108, 16)
    add("zip -P", f"zip -r -P {s} backup.zip secrets/", s)
    s = b(109, 16)
    add("sqlcmd -P", f"sqlcmd -S db.local -U sa -P {s} -Q 'select 1'", s)
    s = b(110, 16)
    add("ldapsearch -w", f"ldapsearch -x -H ldap://dc -D cn=admin,dc=acme -w {s} -b dc=acme", s)
    s = b(111, 16)
    add("smbclient -U u%p", f"smbclient //fs/share -U backup%{s} -c ls", s)
    s = b(112, 16)
    add("mongosh -p", f"mongosh mongodb://db:27017/app -u admin -p {s}", s)
    s = b(113, 16)
    add("7z -p attached", f"7z a -p{s} -mhe=on backup.7z docs/", s)
    s = b(114, 16)
    add("openssl enc -k", f"openssl enc -aes-256-cbc -salt -in plain.txt -out enc.bin -k {s}", s)
    s = b(115, 16)
    add("ssh-keygen -N", f"ssh-keygen -t ed25519 -N {s} -f ~/.ssh/deploy", s)
    s = b(116, 32, _HEX)
    add(
        "Teams webhook URL",
        "curl -H 'Content-Type: application/json' -d '{}' https://acme.webhook.office.com/webhookb2/"
        f"1f0e7c2a-1111-4a4a-9b9b-000000000001@2e0e7c2a-2222-4b4b-8c8c-000000000002/IncomingWebhook/{s}/"
        "3f0e7c2a-3333-4c4c-9d9d-000000000003",
        s,
    )
    s = "sk-ant-api03-" + b(117, 93, _B64URL) + "AA"
    add("bracketed topic", f"[deploy key {s}]", s)
    # Command-line password options beyond the list: attached, separate, `=`, quoted.
    s = b(118, 16)
    add("mysql --password quoted", f"mysql --password='{s}' -h db app", s)
    s = b(119, 16)
    add("mysqlsh -p attached", f"mysqlsh -uroot -p{s} --sql", s)
    s = b(120, 16)
    add("sshpass -p attached", f"sshpass -p{s} scp a host:b", s)
    s = b(121, 16)
    add("curl --user=u:p", f"curl --user=admin:{s} https://api.local/", s)
    s = b(122, 16)
    add("htpasswd -b", f"htpasswd -bc .htpasswd admin {s}", s)
    s = b(123, 16)
    add("psql URI quoted", f'psql "postgresql://app:{s}@db:5432/app?sslmode=require"', s)
    s = b(124, 16)
    add("redis-cli -a quoted", f'redis-cli -h cache -a "{s}" info', s)
    s = b(125, 16)
    add("sqlcmd -P attached", f"sqlcmd -S db -U sa -P{s}", s)
    s = b(126, 16)
    add("zip -P quoted", f'zip -P "{s}" out.zip a.txt', s)
    s = b(127, 16)
    add("unzip -P", f"unzip -P {s} out.zip", s)
    s = b(128, 16)
    add("ldapmodify -w attached", f"ldapmodify -D cn=admin -w{s} -f change.ldif", s)
    s = b(129, 16)
    add("rpcclient -U u%p quoted", f"rpcclient -U 'admin%{s}' 10.0.0.5", s)
    s = b(130, 16)
    add("mongodump -p", f"mongodump --host db -u backup -p {s} --out dump", s)
    s = b(131, 16)
    add("podman login -p", f"podman login registry.acme.io -u me -p {s}", s)
    s = b(132, 16)
    add("helm registry login -p", f"helm registry login ghcr.io --username me -p {s}", s)
    s = b(133, 16)
    add("7z -p quoted", f"7z x '-p{s}' backup.7z", s)
    s = b(134, 16)
    add("ssh-keygen -P old", f"ssh-keygen -p -P {s} -N '' -f key", s)
    s = b(135, 16)
    add("ipmitool -P", f"ipmitool -I lanplus -H bmc -U admin -P {s} power status", s)
    s = b(136, 16)
    add("plink -pw", f"plink -ssh -pw {s} admin@host uptime", s)
    s = b(137, 16)
    add("mosquitto_pub -P", f"mosquitto_pub -h mq -u dev -P {s} -t t -m hi", s)
    s = b(138, 16)
    add("cqlsh -p", f"cqlsh db -u cassandra -p {s}", s)
    s = b(139, 16)
    add("az login -p", f"az login --service-principal -u http://app -p {s} --tenant t", s)
    s = b(140, 16)
    add("lftp -u user,pass", f"lftp -u deploy,{s} sftp://files.local", s)
    s = b(141, 16)
    add("xfreerdp /p:", f"xfreerdp /u:admin /p:{s} /v:host", s)
    s = b(142, 16)
    add("skopeo --creds", f"skopeo copy --src-creds me:{s} docker://a docker://b", s)
    s = b(143, 16)
    add("openssl -k=", f'openssl enc -d -aes256 -in x.enc -k "{s}"', s)
    s = b(144, 16)
    add("wpa_passphrase", f"wpa_passphrase HomeWifi {s}", s)
    s = b(145, 16)
    add("twine -p", f"twine upload -u __token__ -p {s} dist/*", s)
    s = b(146, 16)
    add("snmpwalk -A/-X", f"snmpwalk -v3 -l authPriv -u mon -a SHA -A {s} -x AES -X {s} host", s)
    s = b(147, 16)
    add("sqlplus user/pass@", f"sqlplus scott/{s}@//db:1521/orcl", s)
    s = b(148, 16)
    add("rabbitmqadmin -p", f"rabbitmqadmin -H mq -u admin -p {s} list queues", s)
    s = b(149, 16)
    add("psexec -p", f"psexec \\\\host -u admin -p {s} cmd", s)
    return out


def _family_shapes() -> list[tuple[str, str, str]]:
    """Provider families recognised by their own shape (every member of a family), and a bare AWS secret access
    key beside the words that name it."""
    b = _body
    out: list[tuple[str, str, str]] = []

    def add(name: str, text: str, secret: str) -> None:
        assert secret in text, name
        out.append((name, text, secret))

    for seed, env in ((301, "dev"), (302, "prd"), (303, "staging_eu"), (304, "ci-2")):
        s = f"dp.st.{env}." + b(seed, 43)
        add(f"Doppler service token dp.st.{env}.", f"doppler run with {s} -- npm start", s)
    for seed, kind in ((305, "pt"), (306, "ct"), (307, "sa"), (308, "scim"), (309, "audit")):
        s = f"dp.{kind}." + b(seed, 43)
        add(f"Doppler dp.{kind}.", f"the doppler {kind} credential {s} was rotated", s)
    for seed, digits, hmac in ((310, 18, 38), (311, 19, 38), (312, 17, 27), (313, 20, 27)):
        # The first part is the bot's numeric id in base64 (unpadded), then a timestamp and an HMAC.
        user = base64.urlsafe_b64encode(str(int(b(seed, 1, "123456789") + b(seed, digits - 1, string.digits))).encode())
        s = f"{user.decode().rstrip('=')}.{b(seed + 50, 6, _B64URL)}.{b(seed + 100, hmac, _B64URL)}"
        add(f"Discord bot token ({digits}-digit id)", f"client.login({s}) in bot.js", s)
    aws = _ALNUM + "/+"
    add("AWS secret in prose", f"our aws secret is {(s := b(314, 40, aws))} for the deploy user", s)
    add("AWS secret access key words", f"Secret access key: {(s := b(315, 40, aws))}", s)
    add("aws_secret_access_key ini", f"[default]\naws_secret_access_key   =   {(s := b(316, 40, aws))}", s)
    add("AWS secret key before the words", f"{(s := b(317, 40, aws))} is the AWS secret key of ci", s)
    add("AWS SecretAccessKey JSON", f'{{"SecretAccessKey": "{(s := b(318, 40, aws))}", "Expiration": 1}}', s)
    add("AWS secret in a table", f"| aws secret | {(s := b(319, 40, aws))} |", s)
    add("Mailgun key- bare", f"mailgun sends with {(s := 'key-' + b(320, 32, _HEX))} today", s)
    add("Mailgun key- in curl", f"curl -s --user api:{(s := 'key-' + b(321, 32, _HEX))} https://api.mailgun.net", s)
    add("Databricks dapi", f"databricks configure with {(s := 'dapi' + b(322, 32, _HEX))}", s)
    add("Databricks dapi-N", f"the workspace token {(s := 'dapi' + b(323, 32, _HEX) + '-2')} expired", s)
    add("Databricks dapi-NN", f"the workspace token {(s := 'dapi' + b(324, 32, _HEX) + '-12')} expired", s)
    add("Twilio SK bare", f"twilio key {(s := 'SK' + b(325, 32, _HEX))} for sms", s)
    add("Twilio AC bare", f"twilio account {(s := 'AC' + b(326, 32, _HEX))} for sms", s)
    add("Twilio AC:token in URL", f"https://{(s := 'AC' + b(327, 32, _HEX))}@api.twilio.com/2010-04-01", s)
    return out
