/// What --print-config hides: secret names (one rule, tested as a table), and secrets inside
/// values that say nothing by their name (a URL's password, a connection string's).
module Swoop.Tests.SecretMaskTests

open Xunit
open Swoop

[<Theory>]
[<InlineData("Password")>]
[<InlineData("Db:Password")>]
[<InlineData("SmtpPass")>]
[<InlineData("Smtp:Passphrase")>]
[<InlineData("ApiPwd")>]
[<InlineData("Credentials")>]
[<InlineData("Aws:CredentialFile")>]
[<InlineData("session-keys")>]
[<InlineData("Jwt:SigningKey")>]
[<InlineData("API_KEY")>]
[<InlineData("ClientSecret")>]
[<InlineData("GitHubToken")>]
[<InlineData("ConnectionStrings:Orders")>]
[<InlineData("Sentry:Dsn")>]
[<InlineData("PasswordSalt")>]
[<InlineData("PrivatePem")>]
let ``a name naming a secret hides its value`` (name: string) =
    Assert.True(SecretMask.isSecretName name)
    Assert.Equal("(hidden)", SecretMask.show name "hunter2")

[<Theory>]
[<InlineData("Db:Host")>]
[<InlineData("Port")>]
[<InlineData("data-dir")>]
[<InlineData("Name")>]
[<InlineData("Admins:0")>]
let ``other names show their value`` (name: string) =
    Assert.False(SecretMask.isSecretName name)
    Assert.Equal("plain", SecretMask.show name "plain")

[<Theory>]
[<InlineData("postgres://app:hunter2@db:5432/orders", "postgres://app:(hidden)@db:5432/orders")>]
[<InlineData("redis://:hunter2@cache", "redis://:(hidden)@cache")>]
[<InlineData("https://ghp_token@github.com/x.git", "https://(hidden)@github.com/x.git")>]
[<InlineData("amqp://u:p@ss@mq/vhost", "amqp://u:(hidden)@mq/vhost")>]
[<InlineData("https://api.example/v1?user=ada&apikey=hunter2#top", "https://api.example/v1?user=ada&apikey=(hidden)#top")>]
[<InlineData("Host=db;Username=app;Password=hunter2;Database=orders", "Host=db;Username=app;Password=(hidden);Database=orders")>]
[<InlineData("Server=db;User Id=app;Pwd=hunter2", "Server=db;User Id=app;Pwd=(hidden)")>]
[<InlineData("https://db.example:443/orders", "https://db.example:443/orders")>]
[<InlineData("mail@example.com", "mail@example.com")>]
[<InlineData("a=b;c=d", "a=b;c=d")>]
[<InlineData("", "")>]
let ``a value hides the secrets inside it, whatever its name`` (value: string, shown: string) =
    Assert.Equal(shown, SecretMask.show "Db:Url" value)
