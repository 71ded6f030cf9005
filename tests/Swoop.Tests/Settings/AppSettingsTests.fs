/// Swoop.Settings: appsettings files and the environment bound to F# records, later sources
/// winning, every problem named, each value's source shown.
module Swoop.Tests.AppSettingsTests

open System
open System.IO
open Xunit
open Swoop.Settings

type Db = { Host: string; Port: int; Password: string }

type Section =
    { Name: string
      Db: Db
      Admins: string list
      Ports: int[]
      Nickname: string option
      Timeout: TimeSpan option }

/// The root record; its one field's name keeps the test's environment variable its own.
type Settings = { SwoopSettingsTest: Section }

let private folderWith (files: (string * string) list) =
    let folder = Path.Combine(Path.GetTempPath(), "swoop-settings-" + Guid.NewGuid().ToString "N")
    Directory.CreateDirectory folder |> ignore

    for name, content in files do
        File.WriteAllText(Path.Combine(folder, name), content)

    folder

let private baseFile =
    """{ "SwoopSettingsTest": { "Name": "shop", "Db": { "Host": "localhost", "Port": 5432, "Password": "p" },
         "Admins": [ "ada", "grace" ], "Ports": [ 1, 2 ], "Timeout": "00:00:30" } }"""

[<Fact>]
let ``a record binds with options, lists and arrays; the environment file and variables win in that order`` () =
    let folder = folderWith [ "appsettings.json", baseFile; "appsettings.Staging.json", """{ "SwoopSettingsTest": { "Name": "staging shop", "Db": { "Port": 6000 } } }""" ]
    Environment.SetEnvironmentVariable("SwoopSettingsTest__Db__Port", "7000")

    try
        let configuration = AppSettings.configuration folder "Staging"

        match AppSettings.bind<Settings> configuration with
        | Error problems -> failwithf "%A" problems
        | Ok settings ->
            let s = settings.SwoopSettingsTest
            Assert.Equal("staging shop", s.Name)
            Assert.Equal(7000, s.Db.Port)
            Assert.Equal("localhost", s.Db.Host)
            Assert.Equal<string list>([ "ada"; "grace" ], s.Admins)
            Assert.Equal<int[]>([| 1; 2 |], s.Ports)
            Assert.Equal(None, s.Nickname)
            Assert.Equal(Some(TimeSpan.FromSeconds 30.0), s.Timeout)

        let described = AppSettings.describe<Settings> configuration
        let line (key: string) = described.Split('\n') |> Array.find (fun l -> l.StartsWith(key + " "))
        Assert.EndsWith("# environment SwoopSettingsTest__Db__Port", line "SwoopSettingsTest:Db:Port")
        Assert.EndsWith("# appsettings.Staging.json", line "SwoopSettingsTest:Name")
        Assert.EndsWith("# appsettings.json", line "SwoopSettingsTest:Db:Host")
        Assert.Contains("(hidden)", line "SwoopSettingsTest:Db:Password")
    finally
        Environment.SetEnvironmentVariable("SwoopSettingsTest__Db__Port", null)
        Directory.Delete(folder, true)

type Mail = { Host: string; SmtpPass: string; ApiPwd: string; Credentials: string list; Url: string }

/// Another root, its one field's name its own.
type MailSettings = { SwoopSettingsMail: Mail }

[<Fact>]
let ``--print-config hides passwords by any name and inside connection URLs`` () =
    let folder =
        folderWith
            [ "appsettings.json",
              """{ "SwoopSettingsMail": { "Host": "smtp.example", "SmtpPass": "hunter2", "ApiPwd": "hunter3",
                   "Credentials": [ "ada:hunter4" ], "Url": "smtp://ada:hunter5@smtp.example:587" } }""" ]

    try
        let described = AppSettings.describe<MailSettings> (AppSettings.configuration folder "Production")
        let line (key: string) = described.Split('\n') |> Array.find (fun l -> l.StartsWith(key + " "))
        Assert.Contains("smtp.example", line "SwoopSettingsMail:Host")
        Assert.Contains("(hidden)", line "SwoopSettingsMail:SmtpPass")
        Assert.Contains("(hidden)", line "SwoopSettingsMail:ApiPwd")
        Assert.Contains("(hidden)", line "SwoopSettingsMail:Credentials:0")
        Assert.Contains("smtp://ada:(hidden)@smtp.example:587", line "SwoopSettingsMail:Url")

        for secret in [ "hunter2"; "hunter3"; "hunter4"; "hunter5" ] do
            Assert.DoesNotContain(secret, described)
    finally
        Directory.Delete(folder, true)

[<Fact>]
let ``every problem is named by its key`` () =
    let folder = folderWith [ "appsettings.json", """{ "SwoopSettingsTest": { "Name": "x", "Db": { "Host": "h", "Port": "many" }, "Admins": [] } }""" ]

    try
        match AppSettings.bind<Settings> (AppSettings.configuration folder "Production") with
        | Ok _ -> failwith "bound"
        | Error problems ->
            Assert.Equal<string list>(
                [ "SwoopSettingsTest:Db:Port must be an integer (not 'many')"; "SwoopSettingsTest:Db:Password is required" ],
                problems
            )
    finally
        Directory.Delete(folder, true)
