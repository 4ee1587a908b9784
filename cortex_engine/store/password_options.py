"""Command-line password options the redaction knows (`redact.PASSWORD_OPTIONS`): which programs take a secret as
a short option, and how the value is given. Data only; `redact` builds one rule per row."""

from __future__ import annotations

# How a short option takes its value: only attached (`-pSECRET`: a bare `-p` prompts, and the next word is
# something else, as for mysql's database), attached or separate (`-p SECRET`, `-pSECRET`, `-p=SECRET`), or only
# separate (`-k SECRET`: `-kfile` is another option).
ATTACHED, EITHER, SEPARATE = "attached", "either", "separate"

# Command-line password options: (programs, options, how the value is given). A program may be a command with
# its subcommand (`docker … login`: `docker run -p` publishes a port). Options are matched case-sensitively
# (`ldapsearch -W` prompts, `-w` takes the password). Add rows here.
PASSWORD_OPTIONS: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (
        (
            "mysql",
            "mysqldump",
            "mysqladmin",
            "mysqlsh",
            "mysqlimport",
            "mysqlcheck",
            "mysqlshow",
            "mysqlslap",
            "mariadb",
            "mariadb-dump",
            "mariadb-admin",
            "mariadb-import",
            "mariadb-check",
        ),
        ("-p",),
        ATTACHED,
    ),
    (("7z", "7za", "7zr", "7zz", "rar", "unrar"), ("-p",), ATTACHED),
    (("sshpass",), ("-p",), EITHER),
    (("redis-cli", "keydb-cli", "valkey-cli"), ("-a",), EITHER),
    (("curl", "wget", "http", "https"), ("-u", "-U", "--user", "--proxy-user"), EITHER),
    (
        (
            "docker login",
            "podman login",
            "buildah login",
            "nerdctl login",
            "finch login",
            "skopeo login",
            "crane login",
            "oras login",
            "regctl login",
            "helm login",
            "cf login",
            "oc login",
            "az login",
        ),
        ("-p",),
        EITHER,
    ),
    (("zip", "unzip", "zipcloak", "funzip"), ("-P",), EITHER),
    (("sqlcmd", "bcp", "osql", "mssql-cli"), ("-P",), EITHER),
    (
        (
            "ldapsearch",
            "ldapmodify",
            "ldapadd",
            "ldapdelete",
            "ldapwhoami",
            "ldapcompare",
            "ldapmodrdn",
            "ldapexop",
            "ldapvc",
        ),
        ("-w",),
        EITHER,
    ),
    (("ldappasswd",), ("-w", "-s", "-a"), EITHER),
    (
        (
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            "mongostat",
            "mongotop",
            "mongofiles",
        ),
        ("-p",),
        EITHER,
    ),
    (("openssl",), ("-k", "-K"), SEPARATE),
    (("ssh-keygen",), ("-N", "-P"), EITHER),
    (("ipmitool",), ("-P",), EITHER),
    (("plink", "pscp", "psftp", "putty"), ("-pw",), SEPARATE),
    (("mosquitto_pub", "mosquitto_sub", "mosquitto_rr"), ("-P",), EITHER),
    (
        (
            "cqlsh",
            "rabbitmqadmin",
            "twine",
            "psexec",
            "paexec",
            "rdesktop",
            "smbmap",
            "crackmapexec",
            "netexec",
            "nxc",
            "evil-winrm",
            "ncftp",
            "ncftpput",
            "ncftpget",
            "useradd",
            "usermod",
        ),
        ("-p",),
        EITHER,
    ),
    (
        (
            "snmpwalk",
            "snmpbulkwalk",
            "snmpget",
            "snmpgetnext",
            "snmpset",
            "snmptable",
            "snmptrap",
            "snmpbulkget",
            "snmpdf",
            "snmpstatus",
        ),
        ("-A", "-X", "-c"),
        EITHER,
    ),
)
