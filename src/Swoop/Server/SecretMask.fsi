namespace Swoop

/// What `--print-config` hides, by one rule for the app's options and its settings (and
/// whatever else prints configuration). A value is hidden, shown as "(hidden)", when its name
/// (letters and digits only, in any case) contains pass, pwd, secret, key, token, credential,
/// salt, private, signature, connectionstring or dsn: Password, SmtpPass, ApiPwd, Credentials,
/// session-keys, Jwt:SigningKey, ConnectionStrings:Db. Where the name says nothing, the value
/// is still searched: a URL's user info (`postgres://app:pw@db/x` shows
/// `postgres://app:(hidden)@db/x`, `https://tok@host` shows `https://(hidden)@host`), and
/// the parts of a URL's query or of a `key=value;...` connection string whose key the rule
/// names (`Host=db;Password=pw` shows `Host=db;Password=(hidden)`). Nothing of a hidden value
/// is printed, not even its length. An option that holds a secret under another name is
/// declared with `AppOption.secret`.
[<RequireQualifiedAccess>]
module SecretMask =
    /// Whether a value of this name is hidden whole. Example: `SecretMask.isSecretName "Smtp:Pass"` = true.
    val isSecretName: name: string -> bool

    /// The value of `name` as it may be printed: "(hidden)" for a secret name (and a value
    /// given), else the value with the secrets inside it hidden.
    /// Example: `SecretMask.show "Db:Url" "postgres://app:pw@db/x"` = "postgres://app:(hidden)@db/x".
    val show: name: string -> value: string -> string
