/// samples/Fortunes' `main`: its settings and what --print-config shows of them.
namespace Fortunes.Tests

open System
open System.IO
open Xunit

[<CollectionDefinition("console", DisableParallelization = true)>]
type ConsoleCollection() = class end

[<Collection("console")>]
type ProgramTests() =
    /// What `f` writes on stdout and stderr, and its result.
    let captured (f: unit -> 'T) =
        let out, error = Console.Out, Console.Error
        use outText = new StringWriter()
        use errorText = new StringWriter()
        Console.SetOut outText
        Console.SetError errorText

        try
            let result = f ()
            result, outText.ToString(), errorText.ToString()
        finally
            Console.SetOut out
            Console.SetError error

    /// `f` with the environment variable set, then removed.
    let withVariable (name: string) (value: string) (f: unit -> 'T) =
        Environment.SetEnvironmentVariable(name, value)

        try
            f ()
        finally
            Environment.SetEnvironmentVariable(name, null)

    [<Fact>]
    member _.``--print-config names the connection string and hides it, password and all``() =
        let connection = "Server=db.internal;Database=hello_world;User Id=benchmarkdbuser;Password=hunter2-secret;Multiplexing=true"

        let code, out, _ =
            withVariable "ConnectionStrings__Default" connection (fun () ->
                captured (fun () -> global.Fortunes.Program.main [| "--print-config" |]))

        Assert.Equal(0, code)
        let line = out.Split('\n') |> Array.find (fun l -> l.StartsWith "ConnectionStrings:Default")
        Assert.Contains("(hidden)", line)
        Assert.Contains("ConnectionStrings__Default", line)
        Assert.DoesNotContain("hunter2", out)
        Assert.DoesNotContain("db.internal", out)

    [<Fact>]
    member _.``without a connection string the app says which setting is missing, exit code 2``() =
        let code, _, error = captured (fun () -> global.Fortunes.Program.main [| "--port"; "0" |])
        Assert.Equal(2, code)
        Assert.Contains("ConnectionStrings", error)

    [<Theory>]
    [<InlineData("7", 7)>]
    [<InlineData("500", 500)>]
    [<InlineData("501", 500)>]
    [<InlineData("0", 1)>]
    [<InlineData("-1", 1)>]
    [<InlineData("foo", 1)>]
    [<InlineData("", 1)>]
    [<InlineData("1.5", 1)>]
    [<InlineData("123456789012345678901234567890", 500)>]
    member _.``the queries parameter clamps to 1..500 as TechEmpower asks``(value: string, expected: int) =
        Assert.Equal(expected, global.Fortunes.App.queryCount (Some value))
        Assert.Equal(1, global.Fortunes.App.queryCount None)
